"""The stopped-rank watchdog (issue 32 Build 5): a rank stopped while the other waits at a collective is named
and the job ends with EXIT_STALLED within the timeout, instead of hanging until gloo's 30 minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelwiz.launch.watchdog import EXIT_STALLED, stall_timeout

# Each rank writes its pid once it has done one all-reduce, then keeps all-reducing until stopped.
RANKS = """
import os, time
import torch
from accelerate import Accelerator
import torch.distributed as dist

accelerator = Accelerator(cpu=True)
tensor = torch.ones(1)
dist.all_reduce(tensor)
open(f"rank{accelerator.process_index}.pid", "w").write(str(os.getpid()))
while True:
    dist.all_reduce(tensor)
    time.sleep(0.05)
"""


def test_the_timeout_setting():
    assert stall_timeout({}) == 300.0
    assert stall_timeout({"ACCELWIZ_STALL_TIMEOUT": "0"}) == 0.0  # off
    assert stall_timeout({"ACCELWIZ_STALL_TIMEOUT": "soon"}) == 0.0  # named on stderr, then off
    assert stall_timeout({"ACCELWIZ_STALL_TIMEOUT": "2.5"}) == 2.5


@pytest.mark.slow
def test_a_stopped_rank_is_named_and_ends_the_job(tmp_path):
    (tmp_path / "ddp.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\n"
                                       "use_cpu: true\nmain_process_port: 0\n")
    (tmp_path / "ranks.py").write_text(RANKS)
    env = {**os.environ, "ACCELWIZ_STALL_TIMEOUT": "3"}
    run = subprocess.Popen([sys.executable, "-m", "accelwiz", "run", "--config", "ddp.yaml", "--force", "ranks.py"],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "rank1.pid").exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        assert (tmp_path / "rank1.pid").exists(), run.communicate(timeout=30)
        os.kill(int((tmp_path / "rank1.pid").read_text()), signal.SIGSTOP)
        stopped = time.monotonic()
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == EXIT_STALLED, stderr[-2000:]
    assert "rank 1 (pid " in stderr and "has been stopped for" in stderr
    assert time.monotonic() - stopped < 45  # the 3 s timeout, the poll, and torchrun's shutdown
