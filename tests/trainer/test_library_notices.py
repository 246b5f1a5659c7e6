"""The built-in trainer's output carries no DeepSpeed line in a run that does not use DeepSpeed (issue 31): accelerate's
`unwrap_model` imports deepspeed whenever it is installed, and on a machine without a GPU deepspeed's import logs
"Setting accelerator to CPU ... unable to detect it". The real trainer runs the README quickstart's run (a tiny
model, no DeepSpeed) in its own process; the filter is also checked against the real deepspeed logger, both ways
(dropped without DeepSpeed, kept in a DeepSpeed run, every other DeepSpeed line kept)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTICE = "Setting accelerator to CPU"

pytest.importorskip("deepspeed")


def _no_gpu_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DS_ACCELERATOR", "ACCELERATE_USE_DEEPSPEED")}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    return env


def _deepspeed_import(uses_deepspeed: bool) -> str:
    code = ("import logging\n"
            "from accelwiz.trainer.library_notices import quiet_unused_libraries\n"
            f"quiet_unused_libraries(uses_deepspeed={uses_deepspeed})\n"
            "from deepspeed.accelerator import get_accelerator\n"
            "assert get_accelerator().device_name() == 'cpu'\n"
            "logging.getLogger('DeepSpeed').warning('another DeepSpeed warning')\n")
    done = subprocess.run([sys.executable, "-c", code], env=_no_gpu_env(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_cpu_fallback_notice_is_dropped_only_without_deepspeed():
    quiet = _deepspeed_import(uses_deepspeed=False)
    assert NOTICE not in quiet and "another DeepSpeed warning" in quiet, quiet
    shown = _deepspeed_import(uses_deepspeed=True)
    assert NOTICE in shown and "another DeepSpeed warning" in shown, shown


@pytest.mark.slow
def test_the_quickstart_trainer_prints_no_deepspeed_line(tmp_path):
    env = _no_gpu_env()
    made = subprocess.run([sys.executable, "-m", "accelwiz", "init", "--model", "tiny", "--defaults"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    # the process `accelwiz run` launches for this YAML ('NO': one process), with its own --steps
    done = subprocess.run([sys.executable, "-m", "accelwiz.trainer.train", "--config", "accelerate.yaml",
                           "--steps", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "done: step 2/2" in done.stderr, done.stderr
    said = done.stdout + done.stderr
    # the header's stack names the installed versions (read from package metadata, nothing imported): not a notice
    notices = "\n".join(line for line in said.splitlines() if not line.startswith("training with model"))
    assert NOTICE not in said and "real_accelerator" not in said and "deepspeed" not in notices.lower(), said
    assert "Writing model shards" not in said, said  # transformers' one-file progress bar beside our "saved" line
