"""The DPO/GRPO data file in `run`'s preflight (issue 32): a FIFO or a device refused unread in one line (exit 2),
and a big file sampled with the bound `--data` has for SFT (its first MiB), never read whole before the launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelwiz.trainer.data import SAMPLE_BYTES
from accelwiz.trainer.trl_data import read_trl_records

REPO = Path(__file__).resolve().parents[2]
SINGLE = 'distributed_type: "NO"\nnum_processes: 1\nmixed_precision: "no"\nuse_cpu: true\n'
PAIR = json.dumps({"prompt": "p" * 50, "chosen": "c" * 50, "rejected": "r" * 50}) + "\n"


def _dry_run(folder: Path, checkpoint: Path, data: str) -> tuple[subprocess.CompletedProcess, float]:
    (folder / "single.yaml").write_text(SINGLE)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--config", "single.yaml", "--model",
                           str(checkpoint), "--data", data, "--dry-run", "--", "--kind", "dpo"], cwd=folder,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    return done, time.monotonic() - start


@pytest.mark.parametrize("special", ["FIFO", "/dev/zero"])
def test_a_fifo_or_device_as_dpo_data_is_one_line_unread(tmp_path, checkpoint, special):
    data = "/dev/zero" if special == "/dev/zero" else "pairs.jsonl"
    if special == "FIFO":
        os.mkfifo(tmp_path / data)  # no writer ever comes: opening it for reading would block for good
    done, _ = _dry_run(tmp_path, checkpoint, data)
    assert done.returncode == 2, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not a regular file" in errors[0] and data in errors[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_big_dpo_file_is_sampled_not_read_whole(tmp_path, checkpoint):
    """1.5 MiB of valid pairs, then 7 GiB of zero bytes (sparse: no disk): read whole, the preflight met a 64 MiB
    line and refused the file (and a 256 MiB valid file took 10 s and 830 MiB); sampled, it reads the pairs that
    start in the first MiB and passes, the workers judge the rest."""
    path = tmp_path / "pairs.jsonl"
    count = (3 * SAMPLE_BYTES // 2) // len(PAIR)
    with open(path, "w") as handle:
        handle.write(PAIR * count)
        handle.truncate(7 * 2**30)
    sampled = read_trl_records(path, "dpo", max_bytes=SAMPLE_BYTES)
    assert -(-SAMPLE_BYTES // len(PAIR)) == len(sampled) < count  # the lines that start in the first MiB
    done, seconds = _dry_run(tmp_path, checkpoint, path.name)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--kind dpo" in done.stdout and seconds < 60


def test_the_sample_still_names_a_bad_line_in_the_first_mib(tmp_path, checkpoint):
    (tmp_path / "pairs.jsonl").write_text(PAIR * 10 + '{"prompt": "p", "chosen": "c"}\n' + PAIR)
    done, _ = _dry_run(tmp_path, checkpoint, "pairs.jsonl")
    assert done.returncode == 2 and "pairs.jsonl:11: no `rejected` for --kind dpo" in done.stderr, done.stderr
