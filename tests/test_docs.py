"""Generated documentation must match the code it is generated from."""

from __future__ import annotations

from pathlib import Path

from accelwiz.cli.rule_docs import render_rules_markdown
from accelwiz.rules.registry import load_all_rules

REPO = Path(__file__).resolve().parent.parent


def test_rules_doc_is_current():
    expected = render_rules_markdown(load_all_rules().values())
    assert (REPO / "docs" / "rules.md").read_text() == expected, \
        "run `accelwiz rule --all --format markdown > docs/rules.md`"
