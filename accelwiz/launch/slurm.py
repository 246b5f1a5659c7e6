"""An sbatch script for a multi-node run: one `srun` task per node, each running one `accelerate launch`.

The script is written on one machine and runs on others, so it carries nothing of the machine that wrote it:
no interpreter path (`accelerate` and the built-in trainer's module come from the job's PATH), no cache
directory (DeepSpeed's JIT ops cache is torch's own, resolved at job time under the job's $HOME), and every
relative path (the config, the DeepSpeed JSON it names, the trainer's output) is resolved from the directory the
job is submitted from, `$SLURM_SUBMIT_DIR` (the directory `run` runs in); a `deepspeed_config_file` that resolves
only beside the YAML (AW203) is refused, since the workers would not find it there. The head node's address is
looked up at job time.

Two rendezvous variants, as the plan (or the YAML's `rdzv_backend`) says: `static` ranks the nodes by
`$SLURM_NODEID`; `c10d` (the default for multi-node) lets torchrun's rendezvous at the head node rank them and
names the rendezvous after the job (`PET_RDZV_ID=$SLURM_JOB_ID`, torchrun's `--rdzv-id`); only node 0 hosts its
store.

The job fails fast: `srun --kill-on-bad-exit=1`, no torchrun restarts, rendezvous timeouts of minutes, and a
time limit (the plan's, else DEFAULT_TIME_LIMIT) so that a hung job frees its nodes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError
from accelwiz.launch import shell
from accelwiz.launch.command import MULTI_NODE_RDZV_BACKEND, node_argv, planned_launch, with_preflight
from accelwiz.launch.environment import EnvChange, portable_changes
from accelwiz.launch.spec import LaunchSpec

if TYPE_CHECKING:
    from accelwiz.launch.threads import Threads

# Expanded by each srun task on its own node, so placed in the inner command as shell code, by position.
_RANK = shell.Raw('"$SLURM_NODEID"')
_IP = shell.Raw('"$MAIN_PROCESS_IP"')
_IS_HOST = shell.Raw("$((SLURM_NODEID == 0))")  # node 0 hosts c10d's store (command.failure_flags)
# Without a time limit in the plan: a day. A job that hangs (a node that never joins, a collective that never
# returns) holds its nodes until the limit, so it is never left unlimited; the partition's own MaxTime still
# applies when lower. Long runs set theirs in the plan, or edit the line.
DEFAULT_TIME_LIMIT = "1-00:00:00"
# sbatch --time: minutes, minutes:seconds, hours:minutes:seconds, days-hours[:minutes[:seconds]], or unlimited
_TIME_LIMIT = re.compile(r"(?:\d+-\d+(?::\d+){0,2}|\d+(?::\d+){0,2}|UNLIMITED|INFINITE)", re.IGNORECASE)


def render_sbatch(
    spec: LaunchSpec,
    config_path: Path | str,
    target: Sequence[str],
    *,
    job_name: str = "accelwiz",
    env: Sequence[EnvChange] = (),
    cpu_nodes: bool | None = None,
    rdzv_backend: str | None = None,
    time_limit: str | None = None,
    preflight: bool = True,
    threads: Threads | None = None,
    output_dir: Path | str | None = None,
) -> str:
    """The script text; `target` is the script and its args (or `-m module ...`) as accelerate launch takes them.

    `cpu_nodes` (the plan's machines have no GPU) requests no GPUs and, for MULTI_GPU, sets ACCELERATE_USE_CPU
    so the processes train together as CPU DDP on gloo; None reads it from the plan beside the config.
    `rdzv_backend` overrides the plan's and the YAML's, `time_limit` the plan's. `env` is what `run` would set on
    this machine: only the values that mean the same on every machine are carried over. `threads` (CPU nodes)
    sets each process's threads, `output_dir` is the folder the preflight checks (the trainer's).
    """
    planned = planned_launch(config_path)
    cpu_nodes = bool(planned.cpu_nodes) if cpu_nodes is None else cpu_nodes
    backend = rdzv_backend or planned.rdzv_backend or spec.rdzv_backend or MULTI_NODE_RDZV_BACKEND
    time_line = _time_limit_lines(time_limit or planned.time_limit)
    checked = planned.preflight and preflight
    config = _submit_relative(config_path)
    script = target[0] if target[0] == "-m" else _submit_relative(target[0])
    argv = node_argv(spec, config, script, target[1:], machine_rank=_RANK, main_process_ip=_IP,
                     rdzv_backend=backend, is_host=_IS_HOST,
                     launcher_flags=threads.launcher_flags() if threads is not None else ())
    if checked:  # every node checked together first; each task's rank is SLURM_PROCID
        argv = with_preflight(spec, config, argv, main_process_ip=_IP, node_rank=None, output_dir=output_dir)
    lines = [
        *_sbatch_header(spec, config, backend, job_name, time_line, gpus=not (spec.use_cpu or cpu_nodes)),
        *_SUBMIT_DIR_AND_CACHES,
        *_HEAD_NODE_ADDRESS,
        *(_DOCTOR_SECRET if checked else []),
        *_environment(spec, env, cpu_nodes, threads, backend),
        "",
        *_SRUN_NOTES,
        f"srun --nodes={spec.num_machines} --ntasks-per-node=1 --kill-on-bad-exit=1 "
        f"bash -c {shell.quote(shell.join(argv))}",
        "",
    ]
    return "\n".join(lines)


def _sbatch_header(spec: LaunchSpec, config: str, backend: str, job_name: str, time_line: list[str], *, gpus: bool
                   ) -> list[str]:
    """The shebang, what wrote the script, and the #SBATCH lines: nodes, one task each, GPUs, time limit, log."""
    per_node = spec.processes_per_machine
    return [
        "#!/bin/bash",
        # every value in a comment is a quoted word too: a newline in a file name cannot end the comment
        f"# Written by `accelwiz run --slurm` for {shell.quote(config)}: {spec.num_machines} nodes x "
        f"{per_node} process{'es' if per_node != 1 else ''} (world size {spec.num_processes}), "
        f"rdzv_backend {shell.quote(backend)}.",
        f"#SBATCH --job-name={shell.quote(job_name)}",
        f"#SBATCH --nodes={spec.num_machines}",
        "#SBATCH --ntasks-per-node=1",
        *([f"#SBATCH --gpus-per-node={per_node}"] if gpus else []),
        *time_line,
        "#SBATCH --output=%x-%j.out",
        "set -euo pipefail",
        "",
    ]


def _environment(spec: LaunchSpec, env: Sequence[EnvChange], cpu_nodes: bool, threads: Threads | None,
                 backend: str) -> list[str]:
    """The rendezvous's exports, then the values of `run`'s environment that mean the same on every machine."""
    exports = [f"export {c.name}={shell.quote(c.value)}" for c in portable_changes(spec, env, cpu_nodes=cpu_nodes)]
    if threads is not None:  # each node's share of its own cores, as the launch line's flag says
        exports.append(f"export OMP_NUM_THREADS={shell.quote(threads.word())}")
    rendezvous = (
        ["# c10d rendezvous at the head node, one per job: torchrun reads its --rdzv-id from PET_RDZV_ID.",
         'export PET_RDZV_ID="accelwiz-$SLURM_JOB_ID"']
        if backend == "c10d" else ["# static rendezvous: node ranks are SLURM's node ids, the head node is rank 0."]
    )
    return [*rendezvous, *exports]


_SUBMIT_DIR_AND_CACHES = [
    "# Relative paths (the config, the DeepSpeed JSON it names, the output) are from the submit directory.",
    'cd "$SLURM_SUBMIT_DIR"',
    "# Caches are the cluster's, resolved at job time: DeepSpeed's JIT-compiled ops go to torch's per-build",
    "# cache under the job's $HOME (~/.cache/torch_extensions/<python>_<cuda>) unless the job sets",
    "# TORCH_EXTENSIONS_DIR.",
    "",
]
_HEAD_NODE_ADDRESS = [
    "# The first host of the allocation is the rendezvous point for every node: its address, at job time.",
    'HEAD_NODE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    "MAIN_PROCESS_IP=$(scontrol show node \"$HEAD_NODE\" -o | tr ' ' '\\n' | sed -n 's/^NodeAddr=//p' || true)",
    'MAIN_PROCESS_IP=${MAIN_PROCESS_IP:-$HEAD_NODE}',
    "export MAIN_PROCESS_IP",
]
_SRUN_NOTES = [
    "# One task per node: `accelwiz doctor` checks every node together (a mismatch ends the job with one",
    "# table per node in this job's output), then accelerate launch starts that node's processes.",
    "# SLURM_NODEID (0..nodes-1) is the machine rank, so it is expanded inside each task, not here. Any node",
    "# failing ends the job: torchrun does not restart (--max_restarts 0) and its rendezvous gives up in",
    "# minutes, and srun --kill-on-bad-exit=1 stops every other node's task as soon as one exits non-zero.",
    "# shellcheck disable=SC2016",
]


# One random secret per job, exported to every srun task: node 0's preflight store takes only records sealed with
# it (accelwiz/doctor/wire.py), so no other process that reaches the port can pose as a node.
_DOCTOR_SECRET = ["# The preflight's secret for this job (accelwiz doctor refuses records not sealed with it).",
                  "ACCELWIZ_DOCTOR_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \\n')",
                  "export ACCELWIZ_DOCTOR_SECRET"]


def _time_limit_lines(limit: str | None) -> list[str]:
    if limit is None:
        return [f"# No time limit in the plan: {DEFAULT_TIME_LIMIT} (days-hours:minutes:seconds), so a hung job",
                "# frees its nodes; set the plan's launcher time limit, or edit this line, for longer runs.",
                f"#SBATCH --time={DEFAULT_TIME_LIMIT}"]
    if not _TIME_LIMIT.fullmatch(limit):
        raise UsageError(f"the plan's time limit {shell.printable(repr(limit))} is not a SLURM time",
                         hint="write it as sbatch --time takes it: minutes, hours:minutes:seconds or "
                              "days-hours:minutes:seconds (e.g. 2-00:00:00)")
    return ["# The plan's time limit.", f"#SBATCH --time={limit}"]


def _submit_relative(config_path: Path | str) -> str:
    """A path as the job opens it from the submit directory (this one): relative when it lies under it."""
    path = Path(config_path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)  # outside the submit directory: a shared filesystem path the user chose
    return str(path)
