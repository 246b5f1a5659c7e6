"""Run the real engine on every Accelerate YAML in corpus/real/ and compare with the recorded verdicts.

Only the codes of the schema (AW0xx), topology (AW1xx), FSDP/parallelism (AW3xx) and fp8/dynamo
(AW420-AW449) rules are compared; other rule blocks have their own verdicts.
"""

from __future__ import annotations

import csv

import pytest

from tests.conftest import corpus_dir
from tests.corpus.verdicts_accelerate import VERDICTS
from tests.rules.helpers import codes

CORPUS = corpus_dir()
COMPARED = ("AW0", "AW1", "AW3", "AW42", "AW43", "AW44")
pytestmark = pytest.mark.skipif(CORPUS is None, reason="corpus not found")


def labels() -> dict[str, str]:
    """file -> its expect= label from index.tsv, for the Accelerate YAML files."""
    if CORPUS is None:
        return {}
    with (CORPUS / "index.tsv").open() as index:
        rows = csv.DictReader(index, delimiter="\t")
        return {
            row["file"]: row["notes"].split(".")[0].removeprefix("expect=")
            for row in rows
            if row["kind"] == "accelerate_yaml"
        }


def label_expects_findings(label: str) -> bool:
    return not label.startswith("valid") or label.startswith(("valid-with", "valid-ish"))


def test_every_accelerate_file_has_a_verdict():
    assert set(VERDICTS) == set(labels())


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_engine_matches_the_verdict(name):
    assert codes(CORPUS / "real" / name, select=COMPARED) == VERDICTS[name].codes


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_disagreements_with_the_label_are_explained(name):
    label, verdict = labels()[name], VERDICTS[name]
    if label_expects_findings(label) != bool(verdict.codes):
        assert verdict.why, f"verdict {sorted(verdict.codes)} disagrees with label {label!r}: say why"
