"""Real training through `accelwiz run` -> `accelerate launch` on CPU: 1 process, 2-process DDP, 2-process
DeepSpeed ZeRO-2 and ZeRO-3. Each run trains until the loss falls, checkpoints, and a resumed run continues
the step count; Ctrl-C during a 2-process run leaves no process behind.

DeepSpeed JIT-builds its shared-memory op once (about 30 s); `accelwiz run` caches it in
~/.cache/accelwiz/torch_extensions, so later runs (and CI reruns on the same machine) load it in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow

HEAD = "compute_environment: LOCAL_MACHINE\nnum_machines: 1\nmixed_precision: 'no'\nmain_process_port: {port}\n"
CONFIGS = {
    "single": "distributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n",
    "ddp": "distributed_type: MULTI_GPU\nnum_processes: 2\n",
    "zero2": "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"
    "  gradient_accumulation_steps: 2\n  gradient_clipping: 1.0\n",
    "zero3": "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 3\n"
    "  gradient_accumulation_steps: 2\n  gradient_clipping: 1.0\n",
}
EXPECTED = {
    "single": ("NO", 1, None),
    "ddp": ("MULTI_CPU", 2, None),
    "zero2": ("DEEPSPEED", 2, 2),
    "zero3": ("DEEPSPEED", 2, 3),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEAD.format(port=free_port()) + CONFIGS[name])
    return path


def accelwiz_run(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """`accelwiz run ...` in its own session, so that a hung run is killed with every worker it started."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelwiz", "run", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_trains_checkpoints_and_resumes(tmp_path, name):
    config, out = write_config(tmp_path, name), tmp_path / "out"
    first = accelwiz_run("--config", str(config), "--steps", "6", "--output-dir", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert (report["distributed_type"], report["world_size"], report["zero_stage"]) == EXPECTED[name]
    assert report["steps"] == 6 and report["start_step"] == 0
    assert report["loss_last"] < report["loss_first"] - 0.5, report["losses"]
    assert len(report["peak_memory_bytes"]) == report["world_size"] and min(report["peak_memory_bytes"]) > 0
    assert report["tokens_per_second"] > 0
    assert (out / "checkpoints" / "step-000006" / "trainer_state.json").is_file()

    resumed = accelwiz_run("--config", str(config), "--steps", "9", "--resume", "--output-dir", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert (report["start_step"], report["steps"]) == (6, 9)
    assert report["resumed_from"].endswith("step-000006")
    assert len(report["losses"]) == 3
    assert report["losses"][0] < 5.0  # continues from trained weights, not from a fresh model (ln 256 = 5.55)


def test_an_interrupted_run_resumed_matches_the_uninterrupted_one_exactly(tmp_path):
    """Step count, data position, LR schedule and optimizer state all continue: the resumed losses are the
    uninterrupted run's, to the bit (one CPU process is deterministic)."""
    config, out = write_config(tmp_path, "single"), tmp_path / "out"
    common = ("--config", str(config), "--steps", "6", "--micro-batch", "16", "--output-dir", str(out))
    whole = accelwiz_run(*common, "--", "--save-every", "3", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr[-3000:]
    losses = json.loads((out / "run_report.json").read_text())["losses"]
    shutil.rmtree(out / "checkpoints" / "step-000006")  # as if killed after the step-3 checkpoint
    resumed = accelwiz_run(*common, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert report["start_step"] == 3 and report["losses"] == losses[3:]


def test_ctrl_c_during_a_two_process_run_leaves_nothing_running(tmp_path):
    config = write_config(tmp_path, "ddp")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "accelwiz",
            "run",
            "--config",
            str(config),
            "--steps",
            "100000",
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tree: dict[int, psutil.Process] = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the launcher and both workers, importing or training
        tree.update({p.pid: p for p in psutil.Process(proc.pid).children(recursive=True)})
        workers = [p for p in tree.values() if p.is_running() and "train.py" in " ".join(p.cmdline())]
        if len(workers) >= 2:
            break
        time.sleep(0.2)
    assert len(workers) >= 2, "the two workers never started"
    time.sleep(2)
    tree.update({p.pid: p for p in psutil.Process(proc.pid).children(recursive=True)})
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    gone, alive = psutil.wait_procs(list(tree.values()), timeout=5)
    assert alive == [], [p.cmdline() for p in alive]
