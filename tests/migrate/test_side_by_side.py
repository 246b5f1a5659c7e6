"""`accelwiz migrate` next to the real `accelerate to-fsdp2` on every FSDP1 config of the corpus: migrate leaves
no FSDP1 option, keeps every comment and leaves no `check` error; docs/migrate.md is the current table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import corpus_dir
from tests.migrate.side_by_side import Row, compare, fsdp1_configs, render

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    corpus = corpus_dir()
    if corpus is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS")
    return [compare(path) for path in fsdp1_configs(corpus)]


def test_the_corpus_has_fsdp1_configs(rows):
    assert len(rows) >= 10


def test_migrate_leaves_no_fsdp1_option_no_error_and_every_comment(rows):
    for row in rows:
        assert row.fsdp1_left_by_migrate == (), row
        assert row.errors_migrate == (), row
        assert row.kept_by_migrate == row.comments, row


def test_accelerate_to_fsdp2_still_leaks_where_it_has_no_entry(rows):
    """What the doc reports of accelerate 1.15: keys without an entry in its table reach the FSDP2 output."""
    leaking = [row for row in rows if row.fsdp1_left]
    assert leaking and all(row.errors_accelerate for row in leaking)


def test_the_doc_is_current(rows):
    assert (REPO / "docs" / "migrate.md").read_text() == render(rows), \
        "run `ACCELWIZ_CORPUS=../shared/corpus python -m tests.migrate.side_by_side > docs/migrate.md`"
