"""Combinations of optimizer, precision and engine that the libraries refuse or silently replace, refused here
with their reason in one line (issue 28, bad input): the estimate never counts what will not run as asked.

One place, where the workload and the strategy are both known (estimate/request.py calls `refuse_unrunnable`
for flags and `--config` alike): the optimizer under DeepSpeed's offload here, the loss dtype against the precision
and the engine (estimate/loss_dtype.py), Liger's fused loss (estimate/fused_loss.py), and the k-bit preparation
flag without a quantized base (`refuse_kbit_flag`, from the resolution, for every command). Each entry names the
installed source it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.workload import ResolvedWorkload


def refuse_unrunnable(workload: Workload, strategy: Strategy | None, *, trace: bool = False,
                      post_training: bool = False) -> None:
    """UsageError for a combination the stack refuses or replaces; None when it runs as asked. `strategy` None:
    left to the recommendation; `trace`, `post_training`: what else the estimate runs (the loss dtype)."""
    from accelwiz.estimate.fused_loss import refuse_fused_loss
    from accelwiz.estimate.loss_dtype import refuse_loss_dtype

    refuse_loss_dtype(workload, strategy, trace=trace, post_training=post_training)
    refuse_fused_loss(workload, trace=trace, post_training=post_training)
    if strategy is None:
        return
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


def refuse_base_dtype_flag(resolved: ResolvedWorkload) -> None:
    """`--base-dtype` with full fine-tuning: it says how LoRA/QLoRA's frozen base is loaded; a fully trained model's
    dtype is `--precision`'s."""
    from accelwiz.resolution.sourced import BASE_DTYPE_FLAG

    weights = resolved.weights_dtype
    if weights.source == BASE_DTYPE_FLAG and resolved.method.value == "full":
        raise UsageError(f"{BASE_DTYPE_FLAG} {weights.value} with full fine-tuning: it is LoRA's frozen base as loaded",
                         hint="add --lora or --qlora, or say the model's dtype with --precision fp32|mixed|bf16")


def refuse_kbit_flag(resolved: ResolvedWorkload) -> None:
    """`--kbit-prepare/--no-kbit-prepare` without a quantized base: PEFT's prepare_model_for_kbit_training is for
    QLoRA (the workload's `kbit_prepared` only means something there)."""
    from accelwiz.resolution.workload import FLAG

    kbit, method = resolved.kbit_prepared, resolved.method.value
    if kbit.source == FLAG and method != "qlora":
        flag = "--kbit-prepare" if kbit.value else "--no-kbit-prepare"
        raise UsageError(f"{flag} with --method {method}: PEFT's prepare_model_for_kbit_training is for a "
                         "quantized base", hint="add --qlora, or drop the flag")
