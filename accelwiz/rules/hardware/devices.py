"""AW601-AW603: GPUs and processes: a GPU strategy without GPUs, more processes than GPUs, absent gpu_ids."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.hardware._shared import (
    GPU_DISTRIBUTED,
    distributed_type,
    gpu_hint,
    gpu_ids,
    gpu_list,
    written,
)
from accelwiz.rules.rule import Needs, rule


@rule("AW601", "gpu-distribution-without-gpu", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Train on a machine with GPUs; on CPU use `num_processes: 1`, or launch with `ACCELERATE_USE_CPU=true` "
          "(`accelwiz run` does this for MULTI_GPU)")
def gpu_distribution_without_gpu(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a GPU distributed type (MULTI_GPU, FSDP, DEEPSPEED) planned for a machine with no GPU.

    ## Why is this bad?
    Nothing stops the launch. With MULTI_GPU every process falls back to `DistributedType.NO` and trains
    alone, with no gradient synchronisation and no error; FSDP is never applied (or raises "no available
    devices" with `fsdp_sync_module_states`); DeepSpeed fails its batch-size assertion unless the script asks
    for the gloo backend.

    ## Example
    ```yaml
    # accelwiz check --system cpu_only.json
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    on a CPU-only machine (`cpu_only.json`: its profile, saved with `accelwiz probe --save`).
    Use instead: a GPU machine; or, to test on CPU, keep MULTI_GPU and launch with
    `ACCELERATE_USE_CPU=true` (real 2-process DDP on gloo; `accelwiz run` sets it). `distributed_type: MULTI_CPU`
    is no way out: without an mpirun hostfile it silently starts one process (AW109).
    """
    system = ctx.system
    kind = distributed_type(ctx)
    if system is None or system.gpus or system.topology.summary == "unknown" or kind not in GPU_DISTRIBUTED:
        return
    if ctx.effective.use_cpu.strict is True:
        return
    consequence = {
        "MULTI_GPU": "every process runs alone as DistributedType.NO, with no gradient sync and no error",
        "FSDP": "FSDP is never applied: each process trains an unsharded copy, unsynchronised",
        "DEEPSPEED": "DeepSpeed needs InitProcessGroupKwargs(backend=\"gloo\") in the script to run on CPU",
    }.get(kind, "the launcher expects CUDA devices")
    handled = None  # what the launch does about it
    if kind == "MULTI_GPU" and ctx.launch.cpu_fallback:
        handled = "run sets ACCELERATE_USE_CPU=true, so the processes train together as CPU DDP on gloo"
    elif kind == "DEEPSPEED" and ctx.launch.builtin_trainer:
        handled = "the built-in trainer asks for the gloo backend, so DeepSpeed runs on CPU"
    role: Role = "accelerate" if ctx.accelerate is not None else "deepspeed"
    yield Finding(role, ("distributed_type",) if ctx.accelerate is not None else (),
                  f"`{kind}` on {system.name or 'this machine'}, which has no GPU: {consequence}", handled=handled)


@rule("AW602", "processes-exceed-gpus", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Set `num_processes` to GPUs per machine times `num_machines`")
def processes_exceed_gpus(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the processes each machine starts (`num_processes // num_machines`) with the GPUs it can see:
    the GPUs in the profile, or the ones `gpu_ids` selects.

    ## Why is this bad?
    Accelerate assigns `local_process_index % device_count()`, so extra processes silently share a GPU
    (two ranks on one device): each gets half the memory and the run is slower than with fewer processes
    (Accelerate defect N10; it used to fail with "invalid device ordinal").

    ## Example
    ```yaml
    # accelwiz check --system 4xA100-40GB
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    on a machine with 4 GPUs. Use instead:
    ```yaml
    # accelwiz check --system 4xA100-40GB
    distributed_type: MULTI_GPU
    num_processes: 4
    ```
    """
    system = ctx.system
    # the count the launch uses: the YAML's, or check's --num-processes / --num-machines, which win over it
    count, spread = ctx.effective.num_processes, ctx.effective.num_machines
    processes, machines = written(count), written(spread) or 1
    if system is None or not system.gpus or processes is None or machines < 1 or not gpu_hint(ctx):
        return
    selected = gpu_ids(ctx)
    visible = len(selected) if selected is not None else system.gpu_count
    per_machine = processes // machines
    if per_machine > visible:
        source = "`gpu_ids` selects" if selected is not None else f"{system.name or 'the machine'} has"
        named = {name: f"--{name.replace('_', '-')}" if value.source == "command line" else name
                 for name, value in (("num_processes", count), ("num_machines", spread))}
        flagged = count.source == "command line"
        yield Finding("accelerate", () if flagged else ("num_processes",),
                      f"{per_machine} processes per machine ({named['num_processes']} {processes} / "
                      f"{named['num_machines']} {machines}) but {source} {visible} GPU(s): ranks will share GPUs",
                      fix=f"Pass `--num-processes {visible * machines}`" if flagged else
                      f"Set `num_processes: {visible * machines}`")




@rule("AW603", "absent-gpu-ids", Severity.ERROR, needs=Needs.SYSTEM,
      fix="List only GPUs that exist on the machine")
def absent_gpu_ids(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gpu_ids` that name GPUs the machine does not have.

    ## Why is this bad?
    `accelerate launch` exports `gpu_ids` as `CUDA_VISIBLE_DEVICES`; CUDA drops an absent id and every id
    after it, so the run gets fewer GPUs than processes (shared GPUs) or none at all ("no CUDA GPUs are
    available").

    ## Example
    ```yaml
    # accelwiz check --system 2xV100-16GB
    distributed_type: MULTI_GPU
    num_processes: 4
    gpu_ids: 0,1,2,3
    ```
    on a 2-GPU machine. Use instead: `gpu_ids: 0,1` (or `gpu_ids: all`) with `num_processes: 2`.
    ```yaml
    # accelwiz check --system 2xV100-16GB
    distributed_type: MULTI_GPU
    num_processes: 2
    gpu_ids: 0,1
    ```
    """
    system = ctx.system
    ids = gpu_ids(ctx)
    if system is None or ids is None or (not system.gpus and system.topology.summary == "unknown"):
        return
    present = {g.index for g in system.gpus} | {g.nvml_index for g in system.gpus if g.nvml_index is not None}
    absent = [i for i in ids if i not in present]
    if absent:
        have = f"GPUs {gpu_list(sorted(present))}" if present else "no GPU"
        yield Finding("accelerate", ("gpu_ids",),
                      f"`gpu_ids` names GPU {gpu_list(absent)}, but {system.name or 'the machine'} has "
                      f"{have}")
