"""What the topology rules (topology.py, main_process.py, gpu_ids.py) read: machines, processes and devices.

Rules read `.strict` values: a value of the wrong type is the schema rules' finding, not theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.vocab import MULTI_DEVICE_TYPES

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.rules.context import CheckContext


def topology_view(ctx: CheckContext) -> EffectiveConfig | None:
    """The effective values of this unit, unless it has no Accelerate YAML or is a SageMaker config.

    Rules read `.strict` values: a value of the wrong type is the schema rules' finding, not theirs.
    """
    if ctx.accelerate is None or ctx.effective.is_sagemaker:
        return None
    return ctx.effective


def machine_count(view: EffectiveConfig) -> int | None:
    """num_machines (1 when absent); None when malformed."""
    machines = view.num_machines.strict
    return machines if machines is not None and machines >= 1 else None


def gpu_id_count(view: EffectiveConfig) -> int | None:
    """How many devices `gpu_ids` lists; None for "all", absent or malformed."""
    return None if view.gpu_ids.invalid else view.gpu_id_count


def processes_per_machine(view: EffectiveConfig) -> int | None:
    processes, machines = view.num_processes.strict, machine_count(view)
    if processes is None or machines is None or processes < 1:
        return None
    return processes // machines


def written_processes(view: EffectiveConfig) -> int | None:
    """num_processes as written (None when absent or malformed)."""
    return view.num_processes.strict if view.num_processes.is_written else None


def lacks_multi_gpu_ids(view: EffectiveConfig) -> bool:
    """accelerate's own check (launch.py): multi_gpu on one machine with fewer than two ids is refused."""
    count = gpu_id_count(view)
    return (view.distributed_type.value in MULTI_DEVICE_TYPES and (machine_count(view) or 1) <= 1
            and count is not None and count < 2)
