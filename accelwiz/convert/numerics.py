"""How the numbers of a DeepSpeed run and an FSDP run of the same config differ (accelerate 1.15, DeepSpeed 0.19.8,
torch FSDP2), for the precision the config trains in.

Read in the installed code:
- DeepSpeed: the engine casts the module to fp16/bf16 and runs it without autocast (unless `torch_autocast`);
  ZeRO's optimizer keeps fp32 master partitions and steps on them (`_create_fp32_partitions`) unless
  `bf16.bf16_master_weights_and_grads` keeps them in bf16; gradients are reduced in the 16-bit dtype unless
  `communication_data_type` says otherwise (`DeepSpeedEngine.communication_data_type`); fp16 uses DeepSpeed's own
  dynamic loss scaler (`initial_scale_power`, `loss_scale_window`, `hysteresis`, `min_loss_scale`).
- accelerate + FSDP2: with mixed_precision fp16/bf16, trainable parameters loaded in 16-bit are upcast to fp32
  (`fsdp2_prepare_model`, "to mimic DeepSpeed"); the MixedPrecisionPolicy gathers and reduces in the 16-bit dtype
  (`set_mixed_precision`: param_dtype = reduce_dtype); the forward runs under torch.autocast (`native_amp`); fp16
  uses torch's GradScaler (`get_fsdp2_grad_scaler`: 2**16, growth every 2000 steps). With mixed_precision no,
  nothing is upcast: a model loaded in bf16 trains in pure bf16.
- The case that made Hugging Face write it up: https://huggingface.co/blog/deepspeed-to-fsdp-and-back, and
  accelerate's concept guide https://huggingface.co/docs/accelerate/concept_guides/fsdp_and_deepspeed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def numerical_differences(precision: str | None, deepspeed: Mapping[str, Any] | None = None) -> list[str]:
    """'numerics: ...' lines for a run in `precision` ('no', 'fp16', 'bf16', 'fp8' or None when the script or
    the Trainer decides), with what the DeepSpeed JSON (when converting from one) changes about the default."""
    deepspeed = deepspeed or {}
    if precision not in ("fp16", "bf16", "fp8"):
        return ["numerics: fp32 on both sides for a model loaded in fp32; a model loaded in bf16/fp16 trains "
                "entirely in that dtype under FSDP with mixed_precision no (nothing is upcast, no fp32 master "
                "copy), so load it in fp32 or set the same mixed precision on both"]
    half = "bf16" if precision in ("bf16", "fp8") else "fp16"
    bf16_block = deepspeed.get("bf16") if isinstance(deepspeed.get("bf16"), Mapping) else {}
    masters = "bf16" if bf16_block.get("bf16_master_weights_and_grads") is True else "fp32"
    lines = [
        f"numerics: master weights: DeepSpeed casts the model to {half} and keeps {masters} master weights in its "
        "optimizer; accelerate's FSDP upcasts 16-bit-loaded trainable parameters to fp32 and gathers them in "
        f"{half} (MixedPrecisionPolicy param_dtype={half}), so its checkpoints are fp32"
        + ("; this JSON keeps bf16 master weights and grads, FSDP will not (more memory, other rounding)"
           if masters == "bf16" else ""),
    ]
    autocast = deepspeed.get("torch_autocast") if isinstance(deepspeed.get("torch_autocast"), Mapping) else {}
    if autocast.get("enabled") is True:
        lines.append("numerics: forward: both under torch.autocast (this JSON enables DeepSpeed's torch_autocast)")
    else:
        lines.append(f"numerics: forward: FSDP runs it under torch.autocast ({half}; softmax, norms and the loss in "
                     f"fp32 where autocast says so), DeepSpeed runs the {half} module as is: close, not "
                     "bit-identical, losses")
    reduce = deepspeed.get("communication_data_type")
    lines.append(f"numerics: gradients reduced in {reduce or half} by DeepSpeed"
                 + (" (communication_data_type)" if reduce else "") + f", in {half} by FSDP (reduce_dtype)")
    if half == "fp16":
        lines.append("numerics: loss scaling: DeepSpeed's dynamic scaler (initial_scale_power, loss_scale_window "
                     "1000, hysteresis 2 by default) vs torch's GradScaler under FSDP (2**16, growth every 2000 "
                     "steps): different steps are skipped early in training")
    if precision == "fp8":
        lines.append("numerics: fp8 runs through accelerate's TransformerEngine/torchao recipe under FSDP only; "
                     "the DeepSpeed side computes in what its JSON enables")
    return lines
