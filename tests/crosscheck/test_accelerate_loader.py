"""accelwiz against accelerate's own config loader, on the real-world corpus.

Whatever accelwiz passes (no schema, topology or FSDP error) must also load with accelerate's
`load_config_from_file`; accelerate's own negative example must be refused by both. The loader checks only
top-level keys and `distributed_type`, so this is a one-way check: accelwiz is meant to be stricter.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from accelwiz.rules.diagnostic import Severity
from tests.conftest import corpus_dir
from tests.rules.helpers import diagnostics

CORPUS = corpus_dir()
BLOCKING = ("AW0", "AW1", "AW3")


def accelerate_files() -> list[str]:
    if CORPUS is None:
        return []
    with (CORPUS / "index.tsv").open() as index:
        return sorted(
            row["file"] for row in csv.DictReader(index, delimiter="\t") if row["kind"] == "accelerate_yaml"
        )


def accelwiz_errors(path: Path) -> list[str]:
    return [
        f"{d.code} {d.message}" for d in diagnostics(path, select=BLOCKING) if d.severity is Severity.ERROR
    ]


def accelerate_load(path: Path) -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    load_config_from_file(str(path))


@pytest.mark.skipif(CORPUS is None, reason="corpus not found")
@pytest.mark.parametrize("name", accelerate_files())
def test_what_accelwiz_passes_accelerate_loads(name):
    path = CORPUS / "real" / name
    if accelwiz_errors(path):
        pytest.skip("accelwiz reports an error: the one-way check does not apply")
    accelerate_load(path)


def test_accelerates_own_negative_example_is_refused_by_both(corpus):
    path = corpus / "real" / "huggingface__accelerate__tests__test_configs__invalid_keys.yaml"
    assert any(error.startswith("AW001") for error in accelwiz_errors(path))
    with pytest.raises(ValueError, match="unknown keys"):
        accelerate_load(path)


@pytest.mark.parametrize(
    "text,accelerate_message",
    [
        ("distributed_type: TPU\n", "not a valid DistributedType"),
        ("num_processes: 2\n", "must be specified"),
        ("distributed_type: 'NO'\nipex_config:\n  ipex: true\n", "unknown keys"),
    ],
)
def test_refused_by_both(write, text, accelerate_message):
    path = write("a.yaml", text)
    assert accelwiz_errors(path)
    with pytest.raises(ValueError, match=accelerate_message):
        accelerate_load(path)
