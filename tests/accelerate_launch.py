"""The real `accelerate launch` of a YAML on this CPU machine, with a script that prints what each process is.

Shared by the tests that must prove what a launch line does (a rule's claim, or the line `init` prints): import
`launched_ranks`, or the module-scoped fixture `cpu_ddp_launches`, which launches the 2-process CPU YAML once
as printed and once with ACCELERATE_USE_CPU=true (about 10 s each on two cores).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ports import free_port

# `Accelerator()`, as a training script builds it: ACCELERATE_USE_CPU is read by AcceleratorState, not PartialState
# (one os.write per line: two processes share the pipe, and print's text and newline are two writes that interleave)
RANK_SCRIPT = """\
import os
from accelerate import Accelerator
accelerator = Accelerator()
line = f"RANK {accelerator.process_index} OF {accelerator.num_processes} {accelerator.distributed_type.value}\\n"
os.write(1, line.encode())
"""

# the shape `accelwiz init --model tiny --processes 2 --defaults` writes on a machine without GPUs
CPU_TWO_PROCESS_YAML = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
num_machines: 1
num_processes: 2
machine_rank: 0
use_cpu: true
mixed_precision: 'no'
"""


@dataclass(frozen=True, order=True)
class Rank:
    index: int
    world: int
    distributed_type: str


def launched_ranks(config: Path, env: dict[str, str] | None = None, timeout: float = 180) -> list[Rank]:
    """`accelerate launch --config_file CONFIG` of the rank script, as a user types it (plus `env`): one Rank per
    process that printed, sorted. The main port is a free one, so launches never collide."""
    script = config.parent / "print_rank.py"
    script.write_text(RANK_SCRIPT)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
    environ.update(env or {})
    command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(config),
               "--main_process_port", str(free_port()), str(script)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environ,
                          cwd=config.parent, check=False)
    found = re.findall(r"RANK (\d+) OF (\d+) ([A-Z_]+)", done.stdout)
    assert done.returncode == 0 and found, \
        f"accelerate launch failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return sorted(Rank(int(i), int(w), t) for i, w, t in found)


@pytest.fixture(scope="module")
def cpu_ddp_launches(tmp_path_factory) -> dict[str, list[Rank]]:
    """The 2-process CPU YAML launched as printed ("plain") and with ACCELERATE_USE_CPU=true ("use_cpu_env")."""
    folder = tmp_path_factory.mktemp("cpu_launch")
    config = folder / "accelerate.yaml"
    config.write_text(CPU_TWO_PROCESS_YAML)
    return {"plain": launched_ranks(config), "use_cpu_env": launched_ranks(config, {"ACCELERATE_USE_CPU": "true"})}
