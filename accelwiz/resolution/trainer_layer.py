"""Layer 4 of the workload's resolution (resolution/workload.py): the HF Trainer's own fields, when the Trainer
runs the loop. It owns the batch, checkpointing, precision, the load dtype, the AdamW kernel and the collator,
given on its command line or at its own defaults, which are what it runs with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.resolution.collator import batches_vary_in_length
from accelwiz.resolution.load_dtype import trainer_load_dtype
from accelwiz.resolution.loss_kernel import trainer_loss_kernel
from accelwiz.resolution.sourced import TRAINER, Sourced
from accelwiz.resolution.trainer_optim import trainer_default_kernel

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.resolution.stack import Stack


def trainer_layer(args: TrainerArguments | None, stack: Stack) -> dict[str, Sourced]:
    """The HF Trainer's own fields: given, or at the Trainer's defaults (which are what it runs with; the AdamW
    kernel's on `stack`, the versions it trains with)."""
    if args is None:
        return {}

    def owned(value: Any, *argument: str) -> Sourced:
        given = [args.given[a] for a in argument if args.is_given(a)]
        return Sourced(value, TRAINER, given[0] if given else f"{argument[0]}: the Trainer's default")

    layer = {"gradient_checkpointing": owned(args.gradient_checkpointing, "gradient_checkpointing",
                                             "activation_checkpointing")}
    for name, argument in (("micro_batch", "per_device_train_batch_size"),
                           ("gradient_accumulation", "gradient_accumulation_steps")):
        value = args[argument]
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:  # else AW7xx reports the type
            layer[name] = owned(value, argument)
    for flag in ("bf16", "fp16"):  # without either, the launcher's mixed_precision decides (the file layer)
        if args[flag] is True:
            layer["precision"] = owned(flag, flag)
    layer["weights_dtype"] = trainer_load_dtype(args)
    kernel = {"adamw_torch_fused": "fused", "adamw_torch": "foreach"}.get(str(args["optim"]))
    if not args.is_given("optim"):  # the Trainer's default changed with transformers and torch (trainer_optim.py)
        layer["optimizer_kernel"] = trainer_default_kernel(stack)
    elif kernel is not None:
        layer["optimizer_kernel"] = owned(kernel, "optim")
    if str(args["optim"]) in PAGED_OPTIM:  # bitsandbytes' paged AdamW (estimate/paged_states.py)
        layer["optimizer"] = owned(PAGED_OPTIM[str(args["optim"])], "optim")
    layer["kbit_prepared"] = Sourced(False, TRAINER, "neither the Trainer nor TRL 1.16's SFTTrainer calls PEFT's "
                                     "prepare_model_for_kbit_training (a script's own call is not read)")
    loss_kernel = trainer_loss_kernel(args)
    if loss_kernel is not None:
        layer["loss_kernel"] = loss_kernel
    varying = batches_vary_in_length(args)
    if varying is not None:
        layer["varying_lengths"] = Sourced(True, TRAINER, varying)
    return layer


# the Trainer's `optim` names of bitsandbytes' paged AdamW (transformers OptimizerNames) -> the estimator's words
PAGED_OPTIM = {"paged_adamw_32bit": "paged-adamw", "paged_adamw_8bit": "paged-adamw8bit"}
