"""Combinations of optimizer, precision and engine that the libraries refuse or silently replace, refused here
with their reason in one line (issue 28, bad input): the estimate never counts what will not run as asked.

One place, where the workload and the strategy are both known (estimate/request.py calls `refuse_unrunnable`
for flags and `--config` alike). Each entry names the installed source it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def refuse_unrunnable(workload: Workload, strategy: Strategy) -> None:
    """UsageError for a combination the stack refuses or replaces; None when it runs as asked."""
    if strategy.is_deepspeed and strategy.offload_optimizer != "none" and workload.optimizer != "adamw":
        # accelerate 1.x (accelerator.py `_prepare_deepspeed`): with offload_optimizer and
        # zero_force_ds_cpu_optimizer (default true) the script's optimizer goes through
        # utils/deepspeed.py `map_pytorch_optim_to_deepspeed`, which builds DeepSpeedCPUAdam (Adagrad only for
        # torch/bnb 32-bit Adagrad); without accelerate DeepSpeed's engine raises ZeRORuntimeException
        # ("You are using ZeRO-Offload with a client provided optimizer") for anything but its CPU optimizers
        raise UsageError(
            f"--optimizer {workload.optimizer} with DeepSpeed optimizer offload ({strategy.offload_optimizer}): "
            "accelerate replaces it by DeepSpeedCPUAdam (map_pytorch_optim_to_deepspeed; DeepSpeed alone raises "
            "ZeRORuntimeException for a client optimizer under ZeRO-Offload), so fp32 Adam states train on the "
            f"host, not {workload.optimizer}'s",
            hint="pass --optimizer adamw (what runs), or --offload-optimizer none to keep "
            f"{workload.optimizer} on the GPU",
        )
