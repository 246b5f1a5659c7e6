"""A user's script run by `accelwiz run` (through accelwiz.launch.child) prints no DeepSpeed CPU-fallback notice
in a launch that is not DeepSpeed (issue 31), and still does in a DeepSpeed launch: the script imports deepspeed as
accelerate's `unwrap_model` does when it is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("deepspeed")
REPO = Path(__file__).resolve().parents[2]
SCRIPT = ("from deepspeed.accelerator import get_accelerator\n"
          "print('device', get_accelerator().device_name())\n")


@pytest.mark.parametrize(("deepspeed_launch", "shown"), [("", False), ("true", True)])
def test_the_notice_only_in_a_deepspeed_launch(tmp_path, deepspeed_launch, shown):
    (tmp_path / "train.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "DS_ACCELERATOR"}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(REPO), ACCELERATE_USE_DEEPSPEED=deepspeed_launch,
               ACCELWIZ_EXIT_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "accelwiz.launch.child", str(tmp_path / "train.py")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "device cpu" in done.stdout
    assert ("Setting accelerator to CPU" in done.stdout + done.stderr) is shown, done.stdout + done.stderr
