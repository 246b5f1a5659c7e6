"""Every DeepSpeed JSON in corpus/real, through the real engine: the codes match verdicts_deepspeed.py, and
every disagreement with the file's `expect=` label carries a written verdict."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules
from tests.corpus.verdicts_deepspeed import VERDICTS

# Codes owned by this area; rules of other areas land concurrently and are not judged here.
OURS = ("AW0", "AW2", "AW40", "AW41")


def _label_allows(label: str) -> Severity | None:
    """The most severe finding the `expect=` label allows (None: no finding beyond info)."""
    if label.startswith("INVALID"):
        return Severity.ERROR
    if label.startswith(("valid-with-", "deprecated", "WARN")):
        return Severity.WARNING
    return None


@pytest.fixture(scope="module")
def labelled(corpus: Path) -> dict[str, str]:
    with open(corpus / "index.tsv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["kind"] == "deepspeed_json"]
    return {r["file"]: r["notes"].split(".")[0].removeprefix("expect=") for r in rows}


@pytest.fixture(scope="module")
def reported(corpus: Path, labelled: dict[str, str]):
    rules = select_rules(OURS)
    result = check_paths([corpus / "real" / name for name in labelled], rules)
    by_file: dict[str, list] = {name: [] for name in labelled}
    for diagnostic in result.diagnostics:
        by_file[Path(diagnostic.file).name].append(diagnostic)
    return by_file


def test_every_deepspeed_json_has_a_verdict(labelled):
    assert set(VERDICTS) == set(labelled)


def test_codes_match_the_verdicts(reported):
    mismatches = {name: sorted({d.code for d in found}) for name, found in reported.items()
                  if {d.code for d in found} != VERDICTS[name].codes}
    assert mismatches == {}


def test_each_disagreement_with_a_label_is_explained(reported, labelled):
    for name, found in reported.items():
        worst = min((d.severity for d in found if d.severity is not Severity.INFO), key=lambda s: s.rank,
                    default=None)
        agrees = worst == _label_allows(labelled[name])
        assert agrees == (VERDICTS[name].why is None), f"{name}: label {labelled[name]!r}, worst {worst}"
