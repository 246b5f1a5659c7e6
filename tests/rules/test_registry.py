"""Invariants of the rule registry (ruff's check_docs_formatted.py, as tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.registry import CODE_PATTERN, NAME_PATTERN, load_all_rules

RULES = load_all_rules()
TESTS = Path(__file__).resolve().parent.parent
# A code's block says what it is about; each rule module registers only its own blocks.
BLOCKS = {
    "schema_rules": ("AW0",), "topology": ("AW1",), "memory": ("AW5",),
    # the accelwiz.rules.hardware package
    "devices": ("AW601", "AW602", "AW603"), "gpu_precision": ("AW604", "AW605", "AW606", "AW607", "AW608"),
    "nvme": ("AW609", "AW610", "AW611"), "versions": ("AW612", "AW613", "AW614", "AW615", "AW616"),
    # the accelwiz.rules.deepspeed package, one entry per module
    "reference": ("AW201", "AW202", "AW203", "AW204", "AW205"),
    "offload": ("AW206", "AW207", "AW208", "AW209", "AW210", "AW211"),
    "batch": ("AW212", "AW213", "AW214", "AW215"),
    "zero": ("AW216", "AW217", "AW218", "AW219", "AW220", "AW224", "AW229", "AW230", "AW231"),
    "optimizer": ("AW221", "AW222", "AW223", "AW233"),
    "auto": ("AW225", "AW226", "AW227", "AW228", "AW232"),
    "precision": ("AW40", "AW41"),
    "fsdp": ("AW30",), "parallelism": ("AW31",), "precision_settings": ("AW42", "AW43", "AW44"),
}


def test_there_are_enough_rules():
    assert len(RULES) >= 45, sorted(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_metadata(code):
    rule = RULES[code]
    assert CODE_PATTERN.match(rule.code)
    assert NAME_PATTERN.match(rule.name), rule.name
    assert not rule.name.startswith(("no-", "disallow-", "banned-"))
    assert isinstance(rule.severity, Severity)
    assert rule.fix and rule.fix[0].isupper() and not rule.fix.endswith("."), rule.fix
    for section in ("## What it does", "## Why is this bad?", "## Example"):
        assert section in rule.doc, f"{code} lacks {section!r}"
    module = rule.check.__module__.rsplit(".", 1)[-1]
    assert code.startswith(BLOCKS[module]), f"{code} is registered in {module}"


def test_names_are_unique():
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_is_exercised_by_a_test(code):
    """A cheap guard against untested rules: its code must appear in some test file besides this one."""
    pattern = re.compile(rf"\b{code}\b")
    for path in TESTS.rglob("*.py"):
        if path.name != "test_registry.py" and pattern.search(path.read_text()):
            return
    pytest.fail(f"{code} appears in no test")
