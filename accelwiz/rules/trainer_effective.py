"""What the HF Trainer's arguments set in the effective config: the values every rule and `--explain` read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.rules.trainer_view import trainer_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


# effective setting -> the DeepSpeed key the Trainer fills for it
_FILLED_SETTINGS = {"micro_batch": "train_micro_batch_size_per_gpu",
                    "gradient_accumulation": "gradient_accumulation_steps",
                    "global_batch": "train_batch_size", "gradient_clipping": "gradient_clipping"}


def trainer_effective(ctx: CheckContext, base: Any) -> Any:
    """`base` (the files' EffectiveConfig) with the Trainer's values, for `--explain` and every rule: what the
    Trainer fills in the DeepSpeed config's "auto", and without DeepSpeed the DataLoader batch, accumulation,
    clipping and precision it owns."""
    from accelwiz.effective import with_trainer

    view = trainer_view(ctx)
    if view is None:
        return base
    args = view.args
    values = _filled_values(args, view.resolution) if view.resolution is not None else _owned_values(view)
    # the Trainer checkpoints only when told to: a command line without the flag does not (its default is off),
    # whatever the plan assumed (accelwiz.resolution.trainer_layer judges memory the same way)
    name = "activation_checkpointing" if args.is_given("activation_checkpointing") else "gradient_checkpointing"
    values["gradient_checkpointing"] = (args.gradient_checkpointing, args.where(name))
    # --fsdp/--fsdp_config: the plugin the Trainer hands the Accelerator (accelwiz.rules.trainer_fsdp)
    from accelwiz.rules.trainer_fsdp import trainer_fsdp_values

    values.update(trainer_fsdp_values(ctx, base))
    # an argument transformers refuses (AW701) stops the run: its default is no value the run uses
    invalid = {problem.name for problem in args.problems}
    values = {setting: value for setting, value in values.items()
              if not invalid & set(_SETTING_ARGUMENTS.get(setting, ()))}
    return with_trainer(base, values)


def _filled_values(args: Any, resolution: Any) -> dict[str, tuple]:
    """With DeepSpeed: the values the Trainer writes into the JSON's "auto" (batch, clipping, precision)."""
    values = {}
    notes = {"micro_batch": args.where("per_device_train_batch_size"),
             "gradient_accumulation": args.where("gradient_accumulation_steps"),
             "global_batch": "world size x per_device_train_batch_size x gradient_accumulation_steps",
             "gradient_clipping": args.where("max_grad_norm")}
    for setting, key in _FILLED_SETTINGS.items():
        if resolution.filled_by.get(key) == "trainer":
            values[setting] = (resolution.filled[key], f'"auto" <- {notes[setting]}')
    for name in ("bf16", "fp16"):
        filled_by = resolution.filled_by.get(f"{name}.enabled")
        # accelerate's set_mixed_precision fills the "auto" block from TrainingArguments.mixed_precision,
        # which is --fp16/--bf16 when given: the Trainer's value either way
        if resolution.precision == name and (filled_by == "trainer" or (filled_by and args[name])):
            via = "" if filled_by == "trainer" else " (through accelerate's mixed_precision)"
            values["mixed_precision"] = (name, f'"auto" <- {args.where(name)}{via}')
    if "mixed_precision" not in values and resolution.precision == "fp32" and any(
            resolution.filled_by.get(f"{n}.enabled") == "trainer" for n in ("bf16", "fp16")):
        values["mixed_precision"] = ("no", '"auto" <- neither --fp16 nor --bf16')
    return values


def _owned_values(view: Any) -> dict[str, tuple]:
    """Without DeepSpeed: the DataLoader batch, accumulation, clipping and precision the Trainer owns."""
    args, values = view.args, {}
    micro, accumulation = args["per_device_train_batch_size"], args["gradient_accumulation_steps"]
    values["micro_batch"] = (micro, f"DataLoader batch_size <- {args.where('per_device_train_batch_size')}")
    values["gradient_accumulation"] = (accumulation, args.where("gradient_accumulation_steps"))
    if view.world_size:
        values["global_batch"] = (micro * accumulation * view.world_size,
                                  f"{view.world_size} processes x micro-batch x accumulation")
    values["gradient_clipping"] = (args["max_grad_norm"], args.where("max_grad_norm"))
    if args["fp16"] or args["bf16"]:
        chosen = args.mixed_precision(None)
        values["mixed_precision"] = (chosen, f"{args.where(chosen)} overrides the launcher's")
    return values


# the Trainer arguments each effective setting is made of
_SETTING_ARGUMENTS = {"micro_batch": ("per_device_train_batch_size",),
                      "gradient_accumulation": ("gradient_accumulation_steps",),
                      "global_batch": ("per_device_train_batch_size", "gradient_accumulation_steps"),
                      "gradient_clipping": ("max_grad_norm",), "mixed_precision": ("fp16", "bf16"),
                      "gradient_checkpointing": ("gradient_checkpointing", "activation_checkpointing")}
