"""Constants and defensive readers shared by the hardware rules: any key may hold any type."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Role
from accelwiz.vocab import GIB

GPU_DISTRIBUTED = ("MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM")
FP8_BACKEND_PACKAGES = {"TE": "transformer_engine", "MSAMP": "msamp", "AO": "torchao"}


def int_value(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text_value(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def yaml_value(ctx: CheckContext, *path: str) -> Any:
    return ctx.accelerate.get(*path) if ctx.accelerate is not None else None


def distributed_type(ctx: CheckContext) -> str | None:
    written = text_value(yaml_value(ctx, "distributed_type"))
    if written:
        return written.upper()
    return "DEEPSPEED" if ctx.accelerate is None and ctx.deepspeed is not None else None


def trains_on_gpus(ctx: CheckContext) -> bool:
    """Whether the run will compute on the profile's GPUs (so their precision support matters)."""
    return bool(ctx.system and ctx.system.gpus) and yaml_value(ctx, "use_cpu") is not True and \
        distributed_type(ctx) != "MULTI_CPU"


def gpu_hint(ctx: CheckContext) -> bool:
    """`distributed_type: 'NO'` is one process on GPU 0 when there is one; only GPU types imply a GPU."""
    return distributed_type(ctx) in GPU_DISTRIBUTED


def uses_deepspeed(ctx: CheckContext) -> bool:
    return distributed_type(ctx) == "DEEPSPEED" or ctx.deepspeed is not None


def precisions(ctx: CheckContext) -> Iterator[tuple[str, Role, KeyPath]]:
    """Each precision the files declare: ("bf16" | "fp16" | "fp8", file role, key path)."""
    if ctx.deepspeed is not None:
        for key, name in (("bf16", "bf16"), ("bfloat16", "bf16"), ("fp16", "fp16")):
            if ctx.deepspeed.get(key, "enabled") is True:
                yield name, "deepspeed", (key, "enabled")
    written = text_value(yaml_value(ctx, "mixed_precision"))
    if written and written.lower() in ("bf16", "fp16", "fp8"):
        yield written.lower(), "accelerate", ("mixed_precision",)


def precision_at(ctx: CheckContext, name: str) -> tuple[Role, KeyPath] | None:
    return next(((role, path) for found, role, path in precisions(ctx) if found == name), None)


def gpu_list(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)

def gpu_ids(ctx: CheckContext) -> list[int] | None:
    """`gpu_ids` as a list of integers; None for absent, `all`, or anything unparseable."""
    value = yaml_value(ctx, "gpu_ids")
    if int_value(value) is not None:
        return [value]
    text = text_value(value)
    if text is None or text.lower() == "all":
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return [int(p) for p in parts] if parts and all(p.isdigit() for p in parts) else None
