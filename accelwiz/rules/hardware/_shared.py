"""What the hardware rules ask of a unit, answered from its effective values (`ctx.effective`)."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.document import KeyPath
from accelwiz.effective import EffectiveValue
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Role
from accelwiz.vocab import GPU_DISTRIBUTED

FP8_BACKEND_PACKAGES = {"TE": "transformer_engine", "MSAMP": "msamp", "AO": "torchao"}
HALF_PRECISIONS = ("bf16", "fp16", "fp8")


def written(value: EffectiveValue) -> int | None:
    """A topology value as written in the file (None when absent or of a type the schema rules report)."""
    return value.strict if value.is_written else None


def distributed_type(ctx: CheckContext) -> str | None:
    """The distributed type; a DeepSpeed JSON checked alone is for the deepspeed launcher."""
    effective = ctx.effective
    return effective.distributed_type.value or ("DEEPSPEED" if effective.json_alone else None)


def trains_on_gpus(ctx: CheckContext) -> bool:
    """Whether the run will compute on the profile's GPUs (so their precision support matters)."""
    return bool(ctx.system and ctx.system.gpus) and ctx.effective.use_cpu.strict is not True and \
        distributed_type(ctx) != "MULTI_CPU"


def gpu_hint(ctx: CheckContext) -> bool:
    """`distributed_type: 'NO'` is one process on GPU 0 when there is one; only GPU types imply a GPU."""
    return distributed_type(ctx) in GPU_DISTRIBUTED


def uses_deepspeed(ctx: CheckContext) -> bool:
    return ctx.effective.uses_deepspeed


def precisions(ctx: CheckContext) -> Iterator[tuple[str, Role, KeyPath]]:
    """Each 16/8-bit precision the files declare: ("bf16" | "fp16" | "fp8", file role, key path).

    The DeepSpeed JSON's enabled block (a literal `true`: other spellings are the schema rules' finding), then
    the YAML's mixed_precision as the launcher reads it.
    """
    effective = ctx.effective
    for item in (effective.mixed_precision, effective.launcher_mixed_precision):
        if item.source == "json" and item.written is not True:
            continue
        if item.value in HALF_PRECISIONS and item.role in ("accelerate", "deepspeed") and item.path:
            yield item.value, item.role, item.path


def precision_at(ctx: CheckContext, name: str) -> tuple[Role, KeyPath] | None:
    return next(((role, path) for found, role, path in precisions(ctx) if found == name), None)


def gpu_list(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)


def gpu_ids(ctx: CheckContext) -> list[int] | None:
    """`gpu_ids` as a list of integers; None for absent, `all`, or anything unparseable."""
    return ctx.effective.gpu_id_list
