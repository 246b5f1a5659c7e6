"""The thread corpus (tests/corpus/threads): real failures and valid configs from public issue threads. Every case
is checked as its user ran it; what accelwiz reports (error and warning codes) and the outcome (caught, missed,
clean, false alarm) must stay what cases.yaml records, so a rule change that moves a case shows up here and in
docs/threads.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import corpus_dir
from tests.corpus.render_threads import DOC, render
from tests.corpus.threads_run import (
    INPUT_ERROR,
    MANIFESTS,
    SETS,
    THREADS,
    TRACKERS,
    load_cases,
    load_trackers,
    needs_corpus,
    reported_codes,
    run_case,
)

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_reports_what_is_recorded(case):
    if needs_corpus(case) and corpus_dir() is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS or put shared/corpus beside the repository")
    result = run_case(case)
    errors = {d.code for d in result.diagnostics if d.severity.value == "error"}
    errors |= {INPUT_ERROR} if result.input_errors else set()  # a refused file blocks as an error does
    assert reported_codes(result) == case.reported
    if case.outcome == "caught":
        assert set(case.codes) <= set(case.reported), "the root cause's codes must be reported"
    elif case.outcome == "clean":
        assert not errors, "a valid config must not get an error"
    elif case.outcome == "false alarm":
        assert errors
    else:  # missed: nothing names the root cause
        assert not case.codes


def test_every_case_is_complete_and_every_file_used():
    used = set()
    for case in CASES:
        assert case.url.startswith("https://github.com/") and case.root_cause and case.provenance
        assert case.verdict in ("broken", "valid")
        assert (case.verdict == "broken") == (case.false_alarm is None and (bool(case.codes) or bool(case.missed)))
        used.update(f for f in case.files if not f.startswith("corpus/"))
        used.update([case.training_args_file] if case.training_args_file else [])
        if case.model and (THREADS / case.model).exists():
            used.update(str(p.relative_to(THREADS)) for p in (THREADS / case.model).rglob("*") if p.is_file())
    manifests = [p for p in THREADS.rglob("*") if p.match(MANIFESTS) or p == TRACKERS]
    on_disk = {str(p.relative_to(THREADS)) for p in THREADS.rglob("*") if p.is_file() and p not in manifests}
    assert on_disk == used
    assert len({case.id for case in CASES}) == len(CASES)


def test_every_source_is_in_one_set():
    """A case's set is its tracker's, kept in trackers.yaml alone: a whole source is design or frozen."""
    table = load_trackers()["trackers"]
    assert set(table.values()) <= set(SETS)
    assert len({name.lower() for name in table}) == len(table), "a tracker listed twice"
    for case in CASES:
        assert case.set in SETS, case.id  # a KeyError names a tracker missing from trackers.yaml
        assert case.out_of_reach is None or case.verdict == "broken", case.id


def test_docs_threads_md_is_current():
    assert Path(DOC).read_text() == render(CASES), "run `python -m tests.corpus.render_threads`"
