"""AW106-AW108: `gpu_ids` against the processes each machine starts (accelerate launch 1.15 exports it as
CUDA_VISIBLE_DEVICES, and refuses multi-GPU on one machine with fewer than two ids)."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.topology_view import gpu_id_count, lacks_multi_gpu_ids, processes_per_machine, topology_view
from accelwiz.vocab import PER_DEVICE_TYPES


@rule("AW106", "too-few-gpu-ids-for-multi-gpu", Severity.ERROR,
      fix="List at least two devices in gpu_ids (or write `gpu_ids: all`), or use `distributed_type: 'NO'`")
def too_few_gpu_ids_for_multi_gpu(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a single-machine MULTI_GPU (or other MULTI_*) config whose `gpu_ids` lists fewer than two devices.

    ## Why is this bad?
    `accelerate launch` refuses it: "Less than two GPU ids were configured and tried to run on multiple
    GPUs" (accelerate#1316).

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: '0'
    ```
    Use instead: `gpu_ids: 0,1` with `num_processes: 2`, or `distributed_type: 'NO'` for one GPU.
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: 0,1
    ```
    """
    view = topology_view(ctx)
    if view is not None and lacks_multi_gpu_ids(view):
        yield Finding("accelerate", ("gpu_ids",),
                      f"gpu_ids {view.gpu_ids.value!r} lists fewer than two devices for "
                      f"`distributed_type: {view.distributed_type.value}` on one machine")


@rule("AW107", "fewer-gpu-ids-than-processes", Severity.ERROR,
      fix="List one device per process in gpu_ids, or lower num_processes")
def fewer_gpu_ids_than_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gpu_ids` listing fewer devices than the processes each machine starts (`num_processes //
    num_machines`).

    ## Why is this bad?
    Each process picks device `local_rank % device_count`, so two ranks silently share one GPU (halving its
    memory and speed) instead of failing (N10, accelerate#3894).

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: 0,1
    num_processes: 4
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: 0,1,2,3
    num_processes: 4
    ```
    or `num_processes: 2`.
    """
    view = topology_view(ctx)
    if view is None or view.distributed_type.value not in PER_DEVICE_TYPES or lacks_multi_gpu_ids(view):
        return
    listed, per_machine = gpu_id_count(view), processes_per_machine(view)
    if listed is not None and per_machine is not None and listed < per_machine:
        yield Finding("accelerate", ("gpu_ids",),
                      f"gpu_ids lists {listed} device(s) but each machine starts {per_machine} processes")


@rule("AW108", "more-gpu-ids-than-processes", Severity.WARNING,
      fix="Raise num_processes to use every listed device, or list only the devices you mean to use")
def more_gpu_ids_than_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gpu_ids` listing more devices than the processes each machine starts.

    ## Why is this bad?
    One process runs per device, so the extra devices stay idle; usually `num_processes` was left at 1 or
    was written per machine instead of in total.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: 0,1,2,3
    num_processes: 2
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    gpu_ids: 0,1
    num_processes: 2
    ```
    or `num_processes: 4`.
    """
    view = topology_view(ctx)
    if view is None or view.distributed_type.value not in PER_DEVICE_TYPES:
        return
    listed, per_machine = gpu_id_count(view), processes_per_machine(view)
    if listed is not None and per_machine is not None and listed > per_machine:
        yield Finding("accelerate", ("gpu_ids",),
                      f"gpu_ids lists {listed} devices but each machine starts only {per_machine} "
                      "process(es)")
