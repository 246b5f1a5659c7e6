"""Constants and helpers used by several DeepSpeed rule modules: key paths, flag reading, the ZeRO stage, and
whether the JSON is launched through accelerate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz import coerce
from accelwiz.config.base import AUTO
from accelwiz.document import Document, KeyPath
from accelwiz.rules.context import CheckContext

ZERO = "zero_optimization"

# "auto" keys accelerate fills (`DeepSpeedPlugin.__post_init__`, `set_mixed_precision`, `_prepare_deepspeed`).
FILLED_BY_ACCELERATE = frozenset({
    "train_micro_batch_size_per_gpu", "train_batch_size", "gradient_accumulation_steps", "gradient_clipping",
    f"{ZERO}.stage", f"{ZERO}.offload_optimizer.device", f"{ZERO}.offload_param.device",
    f"{ZERO}.offload_optimizer.nvme_path", f"{ZERO}.offload_param.nvme_path",
    f"{ZERO}.stage3_gather_16bit_weights_on_model_save", f"{ZERO}.reduce_bucket_size",
    f"{ZERO}.stage3_prefetch_bucket_size", f"{ZERO}.stage3_param_persistence_threshold",
    "optimizer.params.lr", "optimizer.params.weight_decay", "scheduler.params.warmup_min_lr",
    "scheduler.params.warmup_max_lr", "scheduler.params.warmup_num_steps", "scheduler.params.total_num_steps",
    "fp16.enabled", "bf16.enabled",
})

# Filled only by the HF Trainer (`HfTrainerDeepSpeedConfig.trainer_config_process`), never by a plain
# accelerate loop.
FILLED_BY_TRAINER_ONLY = frozenset({"optimizer.params.betas", "optimizer.params.eps"})

# One reading of DeepSpeed's flags for the rules and for `--explain`.
enabled = coerce.flag


def dotted_path(path: KeyPath) -> str:
    """`("zero_optimization", "stage")` -> `"zero_optimization.stage"`."""
    return ".".join(map(str, path))


def zero_stage(ctx: CheckContext) -> int | None:
    """The effective ZeRO stage (from the YAML or the JSON); None when it cannot be told."""
    return ctx.effective.zero_stage.value


def auto_paths(data: Any, path: KeyPath = ()) -> Iterator[KeyPath]:
    """Every key path whose value is the string "auto"."""
    if isinstance(data, dict):
        for key, value in data.items():
            if value == AUTO:
                yield (*path, key)
            else:
                yield from auto_paths(value, (*path, key))


def hf_style(document: Document) -> bool:
    """Whether the JSON was written for the HF integrations: "auto" on a key they fill, outside ZeRO.

    "auto" inside `zero_optimization` is no evidence: plain DeepSpeed silently drops it there, and JSONs for
    the `deepspeed` launcher carry such leftovers (DeepSpeedExamples' SGLang configs).
    """
    return any(dotted_path(p) in FILLED_BY_ACCELERATE | FILLED_BY_TRAINER_ONLY and p[0] != ZERO
               for p in auto_paths(document.data))


def via_accelerate(ctx: CheckContext) -> bool:
    """Checked together with an Accelerate YAML: accelerate launches the JSON."""
    return ctx.accelerate is not None


def hf_launched(ctx: CheckContext) -> bool:
    """Launched through accelerate (and maybe the HF Trainer): with a YAML, or a JSON written in HF style."""
    return via_accelerate(ctx) or (ctx.deepspeed is not None and hf_style(ctx.deepspeed))
