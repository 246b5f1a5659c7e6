"""The plain `accelerate launch` line `init` prints and writes in the YAML's header: what a user can copy and
run as is, environment included, the same form `run --dry-run` prints.

On CPUs, accelerate's launcher runs a MULTI_GPU YAML through torchrun (two real processes), but nothing in the
YAML reaches the workers as "train on the CPU": `use_cpu: true` only sets ACCELERATE_USE_CPU for the simple
launcher (accelerate/utils/launch.py `prepare_simple_launcher_cmd_env`); `prepare_multi_gpu_env` leaves it out,
so each worker's `PartialState._prepare_backend` finds LOCAL_RANK but no CPU flag and no accelerator backend and
falls back to DistributedType.NO: "rank 0 of 1", twice. MULTI_CPU is no way out: without `mpirun_hostfile` it
goes to the simple launcher, which starts ONE process. The shape that trains as one DDP job on gloo is MULTI_GPU
(torchrun starts the processes) with ACCELERATE_USE_CPU=true in the environment (the workers then take
MULTI_CPU with gloo), which is what this line puts in front, as `accelwiz run` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.launch import shell
from accelwiz.launch.threads import available_cores

if TYPE_CHECKING:
    from accelwiz.probe.model import MachineProfile
    from accelwiz.vocab import LauncherKind


def launch_lines(accelerate: dict[str, Any], config_path: Path | str, *, launcher: LauncherKind = "local",
                 system: MachineProfile | None = None) -> list[str]:
    """The commands that start the config at `config_path`, each a line a user can paste into a shell as is (the
    path quoted as one shell word): on one machine `accelwiz run` with the built-in trainer and with a script, and
    the plain `accelerate launch` line; on several, the `run` form for the plan's launcher (multi-node launch
    lines are owned by `accelwiz run`)."""
    run = shell.join(["accelwiz", "run", "--config", str(config_path)])
    machines = accelerate.get("num_machines") if isinstance(accelerate.get("num_machines"), int) else 1
    if machines <= 1:
        plain = plain_launch_line(accelerate, config_path, "your_script.py", system=system)
        return [f"{run}                 # the built-in trainer", f"{run} your_script.py   # your own script", plain]
    if launcher == "slurm":
        return [f"{run} --slurm job.sbatch your_script.py && sbatch job.sbatch"]
    return [f"{run} --print-node-commands your_script.py   # one accelerate launch line per machine"]


def plain_launch_line(accelerate: dict[str, Any], config_path: Path | str, script: str, *,
                      system: MachineProfile | None = None) -> str:
    """`[ACCELERATE_USE_CPU=true] [OMP_NUM_THREADS=N] accelerate launch --config_file CONFIG
    [--num_cpu_threads_per_process N] SCRIPT` for one machine; the CPU parts only where the processes train on
    CPUs (`use_cpu`, or a machine without GPUs), with `cores / processes` threads each."""
    processes = accelerate.get("num_processes") if isinstance(accelerate.get("num_processes"), int) else 1
    machines = accelerate.get("num_machines") if isinstance(accelerate.get("num_machines"), int) else 1
    per_machine = max(1, processes // max(1, machines))
    on_cpu = accelerate.get("use_cpu") is True or (system is not None and system.gpu_count == 0)
    env, flags = [], []
    if on_cpu and accelerate.get("distributed_type") == "MULTI_GPU" and processes > 1:
        env.append("ACCELERATE_USE_CPU=true")
    if on_cpu:
        cores = (system.host.cpu_logical_cores if system is not None else None) or available_cores()
        threads = str(max(1, cores // per_machine))
        env.append(f"OMP_NUM_THREADS={threads}")
        flags = ["--num_cpu_threads_per_process", threads]
    argv = ["accelerate", "launch", "--config_file", str(config_path), *flags, script]
    return shell.join([*map(shell.Raw, env), *argv])
