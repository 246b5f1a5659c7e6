"""AW234: ZeRO-3 without the 16-bit gather on save: the model is saved without its weights.

Under ZeRO-3 every rank holds a shard of each parameter; a full state dict exists only if DeepSpeed gathers it,
which `zero_optimization.stage3_gather_16bit_weights_on_model_save` turns on (DeepSpeed's default is false:
runtime/zero/config.py `DeepSpeedZeroConfig.gather_16bit_weights_on_model_save`). accelerate 1.15
`Accelerator.get_state_dict` (what `accelerator.save_model` and `unwrap_model(...).save_pretrained(state_dict=...)`
recipes call) raises "Cannot get 16bit model weights because `stage3_gather_16bit_weights_on_model_save` in
DeepSpeed config is False"; transformers 5 `Trainer.save_model` catches that, writes no weights file and saves a
DeepSpeed checkpoint instead, to be merged with zero_to_fp32.py (FastChat#508: "save mode is very small").
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.config.base import AUTO
from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO, hf_launched, zero_stage
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.rule import rule


@rule("AW234", "zero3-save-without-16bit-gather", Severity.WARNING,
      fix="Set `zero_optimization.stage3_gather_16bit_weights_on_model_save: true` (YAML: "
          "`deepspeed_config.zero3_save_16bit_model: true`), or save with the engine's checkpoints and convert "
          "them with zero_to_fp32.py")
def zero3_save_without_16bit_gather(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds ZeRO stage 3, launched through accelerate or the HF Trainer, whose save does not gather the 16-bit
    weights: `stage3_gather_16bit_weights_on_model_save`
    false or absent in the DeepSpeed JSON ("auto" takes the YAML's `zero3_save_16bit_model`, false by default),
    or, without a JSON, `deepspeed_config.zero3_save_16bit_model` false or absent in the Accelerate YAML.

    ## Why is this bad?
    Each rank holds only a shard of every parameter. `accelerator.get_state_dict` (and so
    `accelerator.save_model`) raises "Cannot get 16bit model weights"; the Trainer's `save_model` writes no
    model weights at all, only a DeepSpeed checkpoint that must be merged with zero_to_fp32.py before the model
    can be loaded (FastChat#508: the saved model was a stub). The run itself trains, so nothing fails until the
    weights are needed.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto",
     "zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}}
    ```
    """
    # a JSON for the plain `deepspeed` launcher saves with the engine's own checkpoints: the gather is the
    # concern of the HF saves (accelerate's, the Trainer's)
    if zero_stage(ctx) != 3 or not (hf_launched(ctx) or getattr(ctx, "training_args", None) is not None):
        return
    found = _not_gathered(ctx)
    if found is not None:
        role, path, how = found
        yield Finding(role, path, f"ZeRO-3 with {how}: the model is saved without its weights (accelerate's "
                                  "get_state_dict raises, the Trainer's save_model writes only a DeepSpeed "
                                  "checkpoint for zero_to_fp32.py)")


def _not_gathered(ctx: CheckContext) -> tuple[Role, KeyPath, str] | None:
    """Where the run's gather setting comes from and why it is off; None when the save gathers."""
    view = ctx.effective
    yaml_flag = view.zero3_save_16bit_model
    if ctx.deepspeed is not None:
        gather = view.zero_gather_16bit_weights
        if not gather.is_written:
            return "deepspeed", (ZERO,), "no stage3_gather_16bit_weights_on_model_save (DeepSpeed's default: false)"
        key = gather.path[-1]
        if gather.written == AUTO:  # accelerate fills it from zero3_save_16bit_model (DeepSpeedPlugin.__post_init__)
            if yaml_flag.value is True:
                return None
            return "deepspeed", gather.path, f'`{key}: "auto"`, which accelerate fills with ' \
                                             "zero3_save_16bit_model (false unless the YAML sets it)"
        # a value of the wrong type is the schema rules' finding
        return ("deepspeed", gather.path, f"`{key}: false`") if gather.value is False else None
    if ctx.accelerate is None or yaml_flag.value is True:
        return None
    if not yaml_flag.is_written:
        return "accelerate", ("deepspeed_config",), "no deepspeed_config.zero3_save_16bit_model (default: false)"
    return ("accelerate", yaml_flag.path, "`zero3_save_16bit_model: false`") if yaml_flag.value is False else None
