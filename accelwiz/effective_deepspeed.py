"""The DeepSpeed settings a run uses (effective.py), read from its JSON or from the YAML's inline block.

The JSON owns the ZeRO stage, offload, gradient accumulation and clipping; `"auto"` in it is filled the way
accelerate fills it, and dropped the way the plain `deepspeed` launcher drops it when the JSON is checked alone.
The inline `deepspeed_config` of an Accelerate YAML is what accelerate builds a JSON from. The batch sizes are
resolved as DeepSpeed's `_set_batch_related_parameters` resolves them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz import coerce
from accelwiz.config.base import AUTO
from accelwiz.effective_value import EffectiveValue

if TYPE_CHECKING:
    from accelwiz.effective_reader import DocumentReader


def deepspeed_batch(train: Any, micro: Any, accumulation: Any, world: int) -> tuple[int, int, int] | str:
    """DeepSpeed's `_set_batch_related_parameters` + `_batch_assertion`: (tbs, mbs, gas), or its message.

    Values that are not integers count as absent (an "auto" filled by someone else, or a type error the schema
    rules report). Returns the exact assertion text DeepSpeed raises when the values cannot work together.
    """
    tbs, mbs, gas = coerce.integer(train), coerce.integer(micro), coerce.integer(accumulation)
    if world <= 0:
        return f"world size {world} is not positive"
    if tbs is not None and mbs is not None and gas is None:
        gas = tbs // mbs // world if mbs > 0 else 0
    elif tbs is not None and gas is not None and mbs is None:
        mbs = tbs // world // gas if gas > 0 else 0
    elif mbs is not None and gas is not None and tbs is None:
        tbs = mbs * gas * world
    elif tbs is not None and mbs is None and gas is None:
        gas, mbs = 1, tbs // world
    elif mbs is not None and tbs is None and gas is None:
        tbs, gas = mbs * world, 1
    elif tbs is None and mbs is None:
        return "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
    assert tbs is not None and mbs is not None and gas is not None
    if tbs <= 0:
        return f"Train batch size: {tbs} has to be greater than 0"
    if mbs <= 0:
        return f"Micro batch size per gpu: {mbs} has to be greater than 0"
    if gas <= 0:
        return f"Gradient accumulation steps: {gas} has to be greater than 0"
    if tbs != mbs * gas * world:
        return ("Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
                f"gradient_acc_step * world_size {tbs} != {mbs} * {gas} * {world}")
    return tbs, mbs, gas


def from_json(json: DocumentReader, alone: bool) -> dict[str, EffectiveValue]:
    """Stage, offload, GA and clipping when a DeepSpeed JSON is used: the JSON owns them."""
    zero = ("zero_optimization",)
    stage = json.value(*zero, "stage", read=_stage, exact=coerce.exact_integer)
    if isinstance(json.raw(*zero), bool):  # the deprecated form: true is stage 1, false 0 (read_zero_config_deprecated)
        flag = json.raw(*zero)
        stage = EffectiveValue(1 if flag else 0, "derived", "deepspeed", zero, written=flag,
                               note=f"`zero_optimization: {str(flag).lower()}` -> stage {int(flag)} (deprecated form)")
    elif json.raw(*zero, "stage") == AUTO:
        where = (*zero, "stage")
        stage = (EffectiveValue(0, "deepspeed default", "deepspeed", where, written=AUTO,
                                note='"auto": plain DeepSpeed drops it (accelerate would fill 2)') if alone
                 else EffectiveValue(2, "derived", "deepspeed", where, written=AUTO,
                                     note='"auto" -> 2 by accelerate'))
    elif not json.has(*zero, "stage"):
        stage = EffectiveValue(0, "deepspeed default", note="no zero_optimization.stage")
    result = {"zero_stage": stage,
              "offload_optimizer": _json_offload(json, "offload_optimizer", "cpu_offload"),
              "offload_param": _json_offload(json, "offload_param", "cpu_offload_param")}
    for name in ("max_live_parameters", "max_reuse_distance", "prefetch_bucket_size", "param_persistence_threshold"):
        result[f"zero3_{name}"] = json.value(*zero, f"stage3_{name}", read=coerce.integer,
                                             exact=lambda v: coerce.integer(v) is not None)  # 1e9 reads as int
    result["zero_reduce_bucket_size"] = json.value(*zero, "reduce_bucket_size", read=coerce.integer,
                                                   exact=lambda v: coerce.integer(v) is not None)
    for name in ("bf16_master_weights_and_grads", "bf16_optimizer_states"):
        result[name] = json.value("bf16", name, read=coerce.flag, exact=coerce.exact_flag)
    gas = json.value("gradient_accumulation_steps", read=coerce.integer, exact=coerce.exact_integer)
    if json.raw("gradient_accumulation_steps") == AUTO:
        gas = (EffectiveValue(None, "unset", "deepspeed", ("gradient_accumulation_steps",), written=AUTO,
                              note='"auto": filled by the Trainer or accelerate') if alone else
               EffectiveValue(1, "derived", "deepspeed", ("gradient_accumulation_steps",), written=AUTO,
                              note='"auto" -> Accelerator(gradient_accumulation_steps=...), 1 unless set'))
    elif not json.has("gradient_accumulation_steps") and not alone:
        gas = EffectiveValue(1, "accelerate default", note="accelerate adds gradient_accumulation_steps: 1")
    result["gradient_accumulation"] = gas
    clip = json.value("gradient_clipping", read=coerce.number, exact=lambda v: coerce.number(v) is not None)
    if json.raw("gradient_clipping") == AUTO:
        clip = EffectiveValue(1.0, "derived", "deepspeed", ("gradient_clipping",), written=AUTO,
                              note='"auto" -> 1.0 (accelerate; the Trainer uses max_grad_norm, default 1.0)')
    elif not json.has("gradient_clipping"):
        clip = EffectiveValue(1.0, "deepspeed default", note="1.0 since DeepSpeed 0.19.3 (0.0 before)")
    result["gradient_clipping"] = clip
    return result


def _json_offload(json: DocumentReader, block: str, legacy: str) -> EffectiveValue:
    path = ("zero_optimization", block, "device")
    raw = json.raw(*path)
    if coerce.device(raw) is not None:
        return EffectiveValue(raw, "json", "deepspeed", path, written=raw)
    if raw == AUTO:
        return EffectiveValue("none", "derived", "deepspeed", path, note='"auto" -> none', written=raw)
    if coerce.flag(json.raw("zero_optimization", legacy)) is True:  # the deprecated spelling DeepSpeed still maps
        written = json.raw("zero_optimization", legacy)
        return EffectiveValue("cpu", "json", "deepspeed", ("zero_optimization", legacy), written=written,
                              invalid=written is not True)
    if json.has(*path):
        return EffectiveValue(None, "unset", "deepspeed", path, note=f"written as {raw!r}", written=raw,
                              invalid=True)
    return EffectiveValue("none", "deepspeed default")


def from_inline(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    """The inline `deepspeed_config` of the YAML: accelerate builds the DeepSpeed config from it."""
    ds = ("deepspeed_config",)
    stage = yaml.value(*ds, "zero_stage", read=_stage, exact=coerce.exact_integer,
                       default=EffectiveValue(2, "accelerate default"))
    gas = yaml.value(*ds, "gradient_accumulation_steps", read=coerce.integer, exact=coerce.exact_integer,
                     default=EffectiveValue(1, "accelerate default",
                                            note="Accelerator(gradient_accumulation_steps=...), 1 unless set"))
    clip = yaml.value(*ds, "gradient_clipping", read=coerce.number, exact=lambda v: coerce.number(v) is not None,
                      default=EffectiveValue(1.0, "derived", note='absent -> "auto" -> 1.0 (accelerate#3807)'))
    if yaml.raw(*ds, "gradient_clipping") == AUTO:
        clip = EffectiveValue(1.0, "derived", "accelerate", ds + ("gradient_clipping",), note='"auto" -> 1.0',
                              written=AUTO)
    return {
        "zero_stage": stage, "gradient_accumulation": gas, "gradient_clipping": clip,
        "offload_optimizer": yaml.value(*ds, "offload_optimizer_device", read=coerce.launched_device, exact=_launched,
                                        default=EffectiveValue("none", "accelerate default")),
        "offload_param": yaml.value(*ds, "offload_param_device", read=coerce.launched_device, exact=_launched,
                                    default=EffectiveValue("none", "accelerate default")),
    }


def _launched(raw: Any) -> bool:
    """A YAML offload device in any case is valid: the launcher lower-cases it (utils/launch.py)."""
    return coerce.launched_device(raw) is not None


def json_batch(json: DocumentReader, accumulation: EffectiveValue, world: int | None) -> dict[str, EffectiveValue]:
    micro = json.value("train_micro_batch_size_per_gpu", read=coerce.integer, exact=coerce.exact_integer)
    if json.raw("train_micro_batch_size_per_gpu") == AUTO:
        micro = EffectiveValue(None, "unset", "deepspeed", ("train_micro_batch_size_per_gpu",), written=AUTO,
                               note='"auto": the DataLoader\'s batch_size')
    total = json.value("train_batch_size", read=coerce.integer, exact=coerce.exact_integer)
    if json.raw("train_batch_size") == AUTO:
        total = EffectiveValue(None, "unset", "deepspeed", ("train_batch_size",), written=AUTO,
                               note='"auto": micro batch x gradient accumulation x processes')
    if world is None:
        return {"micro_batch": micro, "global_batch": total}
    resolved = deepspeed_batch(total.value, micro.value, accumulation.value, world)
    if isinstance(resolved, str):
        return {"micro_batch": micro, "global_batch": total}
    tbs, mbs, _ = resolved
    if not micro.is_set and json.raw("train_micro_batch_size_per_gpu") != AUTO:
        micro = EffectiveValue(mbs, "derived", note="train_batch_size // world size // gradient accumulation")
    if not total.is_set:
        total = EffectiveValue(tbs, "derived", note="micro batch x gradient accumulation x world size")
    return {"micro_batch": micro, "global_batch": total}


def _stage(value: Any) -> int | None:
    stage = coerce.integer(value)
    return stage if stage in (0, 1, 2, 3) else None
