"""The dtype a Trainer or TRL run loads its weights in (the trainer layer's `weights_dtype`,
accelwiz/resolution/workload.py), from its arguments. No torch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.resolution.sourced import TRAINER, Sourced

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments

# torch dtype names, as from_pretrained's `dtype` and TRL's --dtype take them, in the plan's vocabulary
_DTYPES = {"float32": "fp32", "fp32": "fp32", "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
           "torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}


def trainer_load_dtype(args: TrainerArguments) -> Sourced:
    """The dtype a Trainer or TRL run loads its weights in. TRL (1.16, trainer/utils.py `create_model_from_path`)
    loads a model named by string with `model_init_kwargs`' dtype, default float32 (its ModelConfig's --dtype
    default too); a script's own from_pretrained on transformers 5 defaults to dtype="auto", the checkpoint's
    dtype (config.json; bf16 for most released models). "auto" is taken as bf16."""
    trl = getattr(args, "trl", None)
    if trl is None and args.trl_config is None:
        return Sourced("bf16", TRAINER, "from_pretrained's dtype=\"auto\" (transformers 5): the checkpoint's "
                                        "dtype, bf16 for most models; a script that passes dtype=torch.float32 "
                                        "trains mixed precision")
    trl = trl or {}
    kwargs = trl.get("model_init_kwargs")
    if isinstance(kwargs, str) and kwargs.strip().startswith("{"):
        import json

        try:
            kwargs = json.loads(kwargs)
        except ValueError:
            kwargs = None
    for where, value in ((f"model_init_kwargs.{key}", kwargs.get(key)) for key in ("dtype", "torch_dtype")
                         if isinstance(kwargs, dict)):
        if value is not None:
            return Sourced(_DTYPES.get(str(value), "bf16"), TRAINER, f"{where}: {value}")
    for key in ("dtype", "torch_dtype"):
        if trl.get(key) is not None:
            return Sourced(_DTYPES.get(str(trl[key]), "bf16"), TRAINER, f"--{key} {trl[key]}")
    return Sourced("fp32", TRAINER, "TRL loads a named model in float32 unless model_init_kwargs or --dtype say "
                                    "otherwise (trl 1.16 create_model_from_path)")
