"""An sbatch script for a multi-node run: one `srun` task per node, each running one `accelerate launch`."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from accelwiz.launch.command import node_argv
from accelwiz.launch.environment import EnvChange
from accelwiz.launch.spec import LaunchSpec

# Placeholders that must reach the shell unquoted: each srun task expands them on its own node.
_RANK, _IP = "@@MACHINE_RANK@@", "@@MAIN_PROCESS_IP@@"


def render_sbatch(
    spec: LaunchSpec,
    config_path: Path | str,
    target: Sequence[str],
    *,
    job_name: str = "accelwiz",
    env: Sequence[EnvChange] = (),
) -> str:
    """The script text; `target` is the script and its args (or `-m module ...`) as accelerate launch takes them."""
    per_node = spec.processes_per_machine
    inner = shlex.join(node_argv(spec, config_path, target[0], target[1:], machine_rank=_RANK, main_process_ip=_IP))
    inner = inner.replace(_RANK, '"$SLURM_NODEID"').replace(_IP, '"$MAIN_PROCESS_IP"')
    gpus = [] if spec.use_cpu else [f"#SBATCH --gpus-per-node={per_node}"]
    exports = [f"export {c.name}={shlex.quote(c.value)}" for c in env]
    lines = [
        "#!/bin/bash",
        f"# Written by `accelwiz run --slurm` for {config_path}: {spec.num_machines} nodes x {per_node} "
        f"processes (world size {spec.num_processes}).",
        f"#SBATCH --job-name={job_name}",
        f"#SBATCH --nodes={spec.num_machines}",
        "#SBATCH --ntasks-per-node=1",
        *gpus,
        "#SBATCH --output=%x-%j.out",
        "set -euo pipefail",
        "",
        "# The first host of the allocation is the rendezvous point for every node.",
        'MAIN_PROCESS_IP=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "export MAIN_PROCESS_IP",
        *exports,
        "",
        "# One task per node; accelerate launch starts that node's processes. SLURM_NODEID (0..nodes-1) is the",
        "# machine rank, so it is expanded inside each task, not here.",
        "# shellcheck disable=SC2016",
        f"srun --nodes={spec.num_machines} --ntasks-per-node=1 bash -c {shlex.quote(inner)}",
        "",
    ]
    return "\n".join(lines)
