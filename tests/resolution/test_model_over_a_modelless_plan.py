"""A plan written without a model, then `accelwiz run --model tiny`: the model named on the command line brings
its own sequence length where the plan's was sized for no model (issue 31: it was refused with "sequence length
2048 is longer than the 256 positions of tiny (seq_len from the plan)", hint --seq-len 256). A length the plan
records that fits the model is kept, a flag still wins, and a plan that names a model is judged as before."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from accelwiz.errors import UsageError
from accelwiz.resolution.run import resolve_run

pytestmark = pytest.mark.skipif(shutil.which("accelwiz") is None, reason="the accelwiz script is not installed")


def init(folder: Path, *argv: str) -> Path:
    result = subprocess.run(["accelwiz", "init", "--defaults", *argv], cwd=folder, capture_output=True, text=True,
                            env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert result.returncode == 0, result.stderr
    return folder / "accelerate.yaml"


def test_run_model_tiny_over_a_plan_without_a_model(tmp_path):
    config = init(tmp_path)
    assert "source: none" in (tmp_path / "accelerate.plan.yaml").read_text()
    run = resolve_run(config, model="tiny")
    assert (run.seq_len.value, run.seq_len.source) == (256, "model")
    assert "2048 was planned without a model" in run.seq_len.note
    shown = subprocess.run(["accelwiz", "run", "--model", "tiny", "--dry-run"], cwd=tmp_path, capture_output=True,
                           text=True, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, timeout=120)
    assert shown.returncode == 0, shown.stderr
    row = next(line for line in shown.stderr.splitlines() if line.strip().startswith("sequence_length"))
    assert row.split()[1:3] == ["256", "model"]


def test_what_the_plan_or_a_flag_chose_still_counts(tmp_path):
    """init asks no length without a model (its plan holds the default); a length edited into the plan that fits
    the model is kept."""
    config = init(tmp_path)
    plan = tmp_path / "accelerate.plan.yaml"
    plan.write_text(plan.read_text().replace("sequence_length: 2048", "sequence_length: 128"))
    assert (resolve_run(config, model="tiny").seq_len.value, resolve_run(config, model="tiny").seq_len.source) \
        == (128, "plan")
    with pytest.raises(UsageError, match="sequence length 512 is longer than the 256 positions of tiny"):
        resolve_run(config, model="tiny", flags={"seq_len": 512})


def test_a_plan_with_a_model_is_judged_as_before(tmp_path):
    """The plan's length was chosen for its model: another model named over it is refused where it does not fit,
    with the hint that continues."""
    config = init(tmp_path, "--model", "llama-3.2-1b", "--system", "1xA100-80GB")
    planned = resolve_run(config).seq_len
    assert planned.source == "plan" and planned.value > 256
    with pytest.raises(UsageError, match=f"sequence length {planned.value} is longer than the 256 positions of tiny"):
        resolve_run(config, model="tiny")
