"""AW710-AW712: Trainer arguments that the Trainer refuses with the launcher's DeepSpeed or FSDP.

`Trainer.create_accelerator_and_postprocess` (transformers 5 trainer.py) checks a few Trainer arguments against
the wrapper the Accelerator was built with, and raises in every process, after the model is loaded:
- FSDP's own activation checkpointing (`fsdp_activation_checkpointing`) together with the Trainer's
  `activation_checkpointing` (alias `gradient_checkpointing`, on by default in every TRL config);
- `save_only_model` with `load_best_model_at_end` under DeepSpeed or FSDP (transformers#28866, after
  transformers#27751 failed at the end of training), and `save_only_model` with an FSDP SHARDED_STATE_DICT;
- `auto_find_batch_size` under ZeRO-3.
The wrapper is the Accelerate YAML's (distributed_type, fsdp_config, the DeepSpeed stage of its JSON or inline
keys) or the JSON the Trainer's --deepspeed names. tests/rules/test_trainer_wrapper.py builds the real Trainer
for each condition.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.rules.context import CheckContext

def _args(ctx: CheckContext) -> TrainerArguments | None:
    return getattr(ctx, "training_args", None)


def _fsdp(ctx: CheckContext) -> Any:
    from accelwiz.rules.fsdp import fsdp_view

    return fsdp_view(ctx)


def _deepspeed_stage(ctx: CheckContext) -> int | None:
    """The ZeRO stage of the DeepSpeed config the Trainer runs with; None without DeepSpeed."""
    from accelwiz.rules.trainer_view import trainer_view

    view = trainer_view(ctx)
    if view is not None and view.resolution is not None:
        from accelwiz.config.trainer_deepspeed import get_value

        stage = get_value(view.resolution.config, "zero_optimization.stage")
        if isinstance(stage, str) and stage.strip().isdigit():  # DeepSpeed's pydantic config reads "3" as 3
            stage = int(stage)
        return stage if isinstance(stage, int) and not isinstance(stage, bool) else 0
    effective = ctx.effective
    if not effective.uses_deepspeed:
        return None
    stage = effective.zero_stage.value
    return stage if isinstance(stage, int) else None


@rule("AW710", "fsdp-and-trainer-activation-checkpointing", Severity.ERROR,
      fix="Keep one: fsdp_activation_checkpointing: true with --gradient_checkpointing false (TRL defaults it "
          "to true), or drop fsdp_activation_checkpointing")
def fsdp_and_trainer_activation_checkpointing(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_activation_checkpointing: true` in an FSDP config whose Trainer also checkpoints activations
    (`--gradient_checkpointing` or `--activation_checkpointing`, which every TRL config turns on by default).

    ## Why is this bad?
    The two would checkpoint every block twice. transformers 5 refuses the pair when it builds the Accelerator:
    "`fsdp_config['activation_checkpointing']` (FSDP's own activation checkpointing) and the
    `activation_checkpointing` training argument can't both be set to True", in every process, after the model
    is loaded. With FSDP, prefer FSDP's own (the Trainer's adds a redundant all-gather in backward,
    transformers#30404).

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --gradient_checkpointing
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_activation_checkpointing: true
    ```
    Use instead: `--gradient_checkpointing false`, or drop `fsdp_activation_checkpointing`.
    """
    args, fsdp = _args(ctx), _fsdp(ctx)
    if args is None or fsdp is None or not args.gradient_checkpointing:
        return
    # as the plugin reads FSDP_ACTIVATION_CHECKPOINTING (str_to_bool): a quoted 'true' is on too, whatever the schema
    found = fsdp.fsdp_activation_checkpointing
    if found.value is True:
        name = "activation_checkpointing" if args.is_given("activation_checkpointing") else "gradient_checkpointing"
        yield Finding("accelerate", found.path, f"fsdp_activation_checkpointing and the Trainer's {args.where(name)} "
                                                "both checkpoint activations: the Trainer refuses the pair")


@rule("AW711", "save-only-model-with-sharded-wrapper", Severity.ERROR,
      fix="Drop --save_only_model (checkpoints then hold the DeepSpeed/FSDP state), or drop --load_best_model_at_end"
          " / use fsdp_state_dict_type: FULL_STATE_DICT")
def save_only_model_with_sharded_wrapper(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--save_only_model` together with `--load_best_model_at_end` under DeepSpeed or FSDP, and
    `--save_only_model` with an FSDP SHARDED_STATE_DICT (the FSDP2 default when `fsdp_state_dict_type` is unset).

    ## Why is this bad?
    `save_only_model` writes the model in transformers' format only, while the engine reloads its own
    checkpoints (DeepSpeed's ZeRO files, FSDP's sharded state): loading the best model at the end failed with
    "Can't find a valid checkpoint" (transformers#27751). The Trainer now refuses both combinations at start-up:
    "DeepSpeed can't be used with `save_only_model` along with `load_best_model_at_end`" and "save_only_model
    option is not compatible with FSDP state dict type 'SHARDED_STATE_DICT'".

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --save_only_model --load_best_model_at_end --eval_strategy steps
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 2
    ```
    Use instead: drop `--save_only_model`.
    """
    args = _args(ctx)
    if args is None or not args["save_only_model"]:
        return
    fsdp = _fsdp(ctx)
    wrapper = "DeepSpeed" if _deepspeed_stage(ctx) is not None else "FSDP" if fsdp is not None else None
    if wrapper and args["load_best_model_at_end"]:
        yield Finding(None, (), f"{args.where('save_only_model')} with {args.where('load_best_model_at_end')} under "
                                f"{wrapper}: the best checkpoint holds no {wrapper} state to reload, the Trainer "
                                "refuses it")
    if fsdp is None:
        return
    written = fsdp.fsdp_state_dict_type  # upper-cased, or its number, as the plugin reads it
    # FullyShardedDataParallelPlugin.set_state_dict_type: the launcher's value, else FULL (FSDP1) / SHARDED (FSDP2)
    kind = written.strict if written.strict is not None else (
        "SHARDED_STATE_DICT" if fsdp.fsdp_version.strict == 2 else "FULL_STATE_DICT")
    if kind == "SHARDED_STATE_DICT":
        where = "fsdp_state_dict_type" if written.is_written else "fsdp_state_dict_type unset (the FSDP2 default)"
        yield Finding("accelerate", written.path, f"{args.where('save_only_model')} with {where} {kind}: the "
                                                  "Trainer refuses it (only a full state dict saves as a plain model)")


@rule("AW712", "auto-find-batch-size-with-zero3", Severity.ERROR,
      fix="Drop --auto_find_batch_size and set the micro-batch yourself, or use ZeRO-2/ZeRO-1 or FSDP")
def auto_find_batch_size_with_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--auto_find_batch_size` in a Trainer run under DeepSpeed ZeRO-3.

    ## Why is this bad?
    Halving the batch after an out-of-memory error rebuilds the DeepSpeed engine, which ZeRO-3's partitioned
    parameters do not survive; transformers refuses the pair at start-up: "`auto_find_batch_size` isn't supported
    yet with DeepSpeed Zero-3" (transformers#29058).

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --auto_find_batch_size --per_device_train_batch_size 64
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 3
      zero3_init_flag: true
    ```
    Use instead: `--per_device_train_batch_size 8` without `--auto_find_batch_size`.
    """
    args = _args(ctx)
    if args is not None and args["auto_find_batch_size"] and _deepspeed_stage(ctx) == 3:
        yield Finding(None, (), f"{args.where('auto_find_batch_size')} under DeepSpeed ZeRO-3: the Trainer refuses it")
