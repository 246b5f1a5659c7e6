"""AW617, AW620: `gpu_ids` and the process count against the GPUs visible where check runs (a SLURM job, a container,
CUDA_VISIBLE_DEVICES): the environment says what this job may use."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.hardware._shared import gpu_hint, gpu_ids, gpu_list, written
from accelwiz.rules.rule import rule


@dataclass(frozen=True)
class VisibleHere:
    """The GPUs this process may use, as its environment says: indices when they are indices, and a count."""

    ids: list[int] | None
    count: int
    source: str  # "CUDA_VISIBLE_DEVICES=0,1,2"


def visible_here(environ: Mapping[str, str] | None = None) -> VisibleHere | None:
    """What CUDA_VISIBLE_DEVICES (set by SLURM's gres plugin, container runtimes, users) or, without it, SLURM's
    SLURM_STEP_GPUS / SLURM_JOB_GPUS allot this process; None when nothing restricts it."""
    environ = os.environ if environ is None else environ
    for variable in ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        value = environ.get(variable)
        if value is None or (variable != "CUDA_VISIBLE_DEVICES" and not value.strip()):
            continue
        tokens = [t.strip() for t in value.split(",") if t.strip()]
        numeric = all(t.isascii() and t.isdigit() for t in tokens)
        # SLURM's lists hold physical indices, which a cgroup-confined job sees renumbered from 0: count only
        ids = [int(t) for t in tokens] if numeric and variable == "CUDA_VISIBLE_DEVICES" else None
        return VisibleHere(ids, len(tokens), f"{variable}={value}")
    return None


@rule("AW617", "gpu-ids-not-visible-here", Severity.WARNING,
      fix="Leave `gpu_ids` out (or `all`) inside a job, so the launcher keeps the GPUs the job was given")
def gpu_ids_not_visible_here(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Without `--system`, compares a pinned `gpu_ids` list with the GPUs the environment `accelwiz check` runs in
    allots: `CUDA_VISIBLE_DEVICES` (what SLURM's gres plugin and container runtimes set), else `SLURM_STEP_GPUS`
    / `SLURM_JOB_GPUS`.

    ## Why is this bad?
    `accelerate launch` replaces `CUDA_VISIBLE_DEVICES` with `gpu_ids` (utils/launch.py,
    `prepare_simple_launcher_cmd_env` / `prepare_multi_gpu_env`). In a job given 3 GPUs, `gpu_ids: 0,...,7` makes
    CUDA drop every id from the first one that does not exist: the processes share 3 GPUs, or fail with
    "invalid device ordinal". Where the job's devices are not confined, the listed ids are other jobs' GPUs.

    ## Example
    ```yaml
    # CUDA_VISIBLE_DEVICES=0,1,2 accelwiz check accelerate.yaml
    distributed_type: MULTI_GPU
    num_processes: 8
    gpu_ids: 0,1,2,3,4,5,6,7
    ```
    Use instead: no `gpu_ids` (the job's GPUs), and as many processes as the job has GPUs.
    ```yaml
    # CUDA_VISIBLE_DEVICES=0,1,2 accelwiz check accelerate.yaml
    distributed_type: MULTI_GPU
    num_processes: 3
    ```
    """
    ids = gpu_ids(ctx)
    here = visible_here()
    if ids is None or here is None or ctx.system is not None:  # a --system profile is AW603's to judge
        return
    if here.ids is not None:
        absent = [i for i in ids if i not in here.ids]
        if absent:
            yield Finding("accelerate", ("gpu_ids",),
                          f"`gpu_ids` names GPU {gpu_list(absent)}, which this environment does not allot "
                          f"({here.source}); accelerate launch replaces CUDA_VISIBLE_DEVICES with gpu_ids")
    elif len(ids) > here.count:
        yield Finding("accelerate", ("gpu_ids",),
                      f"`gpu_ids` lists {len(ids)} GPUs, but this job was given {here.count} ({here.source})")


@rule("AW620", "processes-exceed-visible-gpus", Severity.ERROR,
      fix="Start one process per visible GPU (`--num-processes`, torchrun's --nproc_per_node), or list as many GPUs "
          "in CUDA_VISIBLE_DEVICES")
def processes_exceed_visible_gpus(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the processes each machine starts (the YAML's `num_processes`, or check's `--num-processes`, the
    launch's own count) with the GPUs the environment `accelwiz check` runs in leaves visible:
    `CUDA_VISIBLE_DEVICES`, else `SLURM_STEP_GPUS` / `SLURM_JOB_GPUS`. Without `gpu_ids` (which `accelerate
    launch` puts in place of the variable: AW617), with or without `--system`.

    ## Why is this bad?
    torchrun and `accelerate launch` start the processes asked for whatever the variable says, and every one sees
    only the listed GPUs: with `CUDA_VISIBLE_DEVICES=0,1` and 8 processes, ranks 2 to 7 have no GPU of their
    own. They fail with "invalid device ordinal" or are put on a GPU another rank already holds (accelerate's
    `local_process_index % device_count()`), which NCCL refuses ("Duplicate GPU detected"). The `deepspeed`
    launcher given `--num_gpus` drops the variable instead, and runs on GPUs it was meant to keep out.

    ## Example
    ```yaml
    # CUDA_VISIBLE_DEVICES=0,1 accelwiz check accelerate.yaml
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    Use instead: as many processes as visible GPUs.
    ```yaml
    # CUDA_VISIBLE_DEVICES=0,1 accelwiz check accelerate.yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    """
    here = visible_here()
    if here is None or gpu_ids(ctx) is not None or not gpu_hint(ctx) or ctx.effective.use_cpu.strict is True:
        return
    count, spread = ctx.effective.num_processes, ctx.effective.num_machines
    processes, machines = written(count), written(spread) or 1
    if processes is None or machines < 1:
        return
    per_machine = processes // machines
    system = ctx.system
    if per_machine <= here.count or (system is not None and system.gpus and per_machine > system.gpu_count):
        return  # enough GPUs, or more processes than the machine has GPUs at all: AW602 says so
    flagged = count.source == "command line"
    name = "--num-processes" if flagged else "num_processes"
    per = f" / {machines} machines" if machines > 1 else ""
    yield Finding("accelerate" if not flagged and ctx.accelerate is not None else None,
                  ("num_processes",) if not flagged and ctx.accelerate is not None else (),
                  f"{per_machine} processes per machine ({name} {processes}{per}) but {here.source} leaves "
                  f"{here.count} GPU(s) visible: ranks {here.count} to {per_machine - 1} have no GPU of their own "
                  "(\"invalid device ordinal\", or two ranks on one GPU, which NCCL refuses)",
                  fix=f"Pass `--num-processes {here.count * machines}`" if flagged else
                  f"Set `num_processes: {here.count * machines}`")
