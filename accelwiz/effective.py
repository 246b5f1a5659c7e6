"""Effective values: what a run will actually use, and where each value comes from.

The precedence encoded here is accelerate 1.15 + DeepSpeed 0.19.8:
- with a DeepSpeed JSON (`deepspeed_config_file`, or a JSON checked beside the YAML) the JSON owns the ZeRO
stage,
  offload, gradient accumulation, clipping and precision; `"auto"` in it is filled the way accelerate fills it
  (`DeepSpeedPlugin.__post_init__`, `Accelerator._prepare_deepspeed`): stage -> 2, offload -> none, GA -> the
  Accelerator's value, clipping -> 1.0, precision -> the launcher's `mixed_precision`;
- a JSON checked alone may be for the plain `deepspeed` launcher, which drops `"auto"` in its pydantic blocks
  (stage -> 0) and never fills the top-level ones;
- with the inline `deepspeed_config` of the YAML, accelerate builds the JSON itself: zero_stage 2, offload
none,
  GA from the YAML (else the Accelerator's), clipping "auto" -> 1.0 (accelerate#3807);
- the world size is `num_processes` (all machines together).

`resolve` never raises: a value of the wrong type resolves to None with source "unset".
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from accelwiz.config.base import AUTO

if TYPE_CHECKING:
    from accelwiz.document import Document, KeyPath
    from accelwiz.rules.context import CheckContext

Source = Literal["yaml", "json", "accelerate default", "deepspeed default", "derived", "unset"]
Role = Literal["accelerate", "deepspeed"]


@dataclass(frozen=True)
class EffectiveValue:
    """One value the run will use: the value, its source, and (when written) the file and key."""

    value: Any
    source: Source
    role: Role | None = None
    path: KeyPath = ()
    note: str = ""

    @property
    def is_set(self) -> bool:
        return self.value is not None


UNSET = EffectiveValue(None, "unset")


@dataclass(frozen=True)
class EffectiveConfig:
    """The settings of one check unit (an Accelerate YAML, its DeepSpeed JSON, or both)."""

    distributed_type: EffectiveValue = UNSET
    num_processes: EffectiveValue = UNSET
    num_machines: EffectiveValue = UNSET
    processes_per_machine: EffectiveValue = UNSET
    machine_rank: EffectiveValue = UNSET
    mixed_precision: EffectiveValue = UNSET
    zero_stage: EffectiveValue = UNSET
    offload_optimizer: EffectiveValue = UNSET
    offload_param: EffectiveValue = UNSET
    micro_batch: EffectiveValue = UNSET
    gradient_accumulation: EffectiveValue = UNSET
    global_batch: EffectiveValue = UNSET
    gradient_clipping: EffectiveValue = UNSET
    fsdp_version: EffectiveValue = UNSET
    uses_deepspeed: bool = False
    json_alone: bool = False  # a DeepSpeed JSON without an Accelerate YAML: the launcher is unknown

    def items(self) -> list[tuple[str, EffectiveValue]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self) if isinstance(getattr(self, f.name),
                                                                                   EffectiveValue)]


def as_int(value: Any) -> int | None:
    """An integer as DeepSpeed reads it (5e8 is 500000000); None for anything else, bools included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


_TRUE_WORDS = ("true", "yes", "on", "1", "t", "y")


def deepspeed_flag(value: Any) -> bool:
    """Whether DeepSpeed (lax pydantic) and accelerate (`str(v).lower() == "true"`) read a flag as on."""
    return value is True or (isinstance(value, str) and value.strip().lower() in _TRUE_WORDS)


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def deepspeed_batch(train: Any, micro: Any, accumulation: Any, world: int) -> tuple[int, int, int] | str:
    """DeepSpeed's `_set_batch_related_parameters` + `_batch_assertion`: (tbs, mbs, gas), or its message.

    Values that are not integers count as absent (an "auto" filled by someone else, or a type error the schema
    rules report). Returns the exact assertion text DeepSpeed raises when the values cannot work together.
    """
    tbs, mbs, gas = as_int(train), as_int(micro), as_int(accumulation)
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


def resolve(accelerate_doc: Document | None, deepspeed_doc: Document | None) -> EffectiveConfig:
    """The effective values of a unit; never raises on malformed input."""
    yaml = _Reader(accelerate_doc, "accelerate")
    json = _Reader(deepspeed_doc, "deepspeed")
    distributed_type = yaml.value("distributed_type", kind=str)
    uses_deepspeed = deepspeed_doc is not None or distributed_type.value == "DEEPSPEED"
    topology = _topology(yaml)
    world = as_int(topology["num_processes"].value) if accelerate_doc is not None else None
    if deepspeed_doc is not None:
        deepspeed = _from_json(json, yaml, accelerate_doc is None)
        batch = _batch(json, deepspeed["gradient_accumulation"], world)
    elif _names_a_json(yaml):
        # The JSON owns these settings, and it could not be read: say so rather than show inline defaults.
        missing = EffectiveValue(None, "unset", note="set in the deepspeed_config_file, which was not found")
        owned = ("zero_stage", "offload_optimizer", "offload_param", "gradient_accumulation",
                 "gradient_clipping", "micro_batch")
        deepspeed = dict.fromkeys(owned, missing)
        batch = {}
    elif uses_deepspeed:
        deepspeed = _from_inline(yaml)
        batch = {"micro_batch": EffectiveValue(None, "unset", note="the DataLoader's batch_size")}
    else:
        deepspeed, batch = {}, {}
    return EffectiveConfig(
        distributed_type=distributed_type, **topology, **deepspeed, **batch,
        mixed_precision=_precision(yaml, json, accelerate_doc is None),
        fsdp_version=_fsdp_version(yaml, distributed_type.value),
        uses_deepspeed=uses_deepspeed, json_alone=accelerate_doc is None and deepspeed_doc is not None,
    )


class _Reader:
    """Typed, defensive reads from one document: a wrong type reads as "unset"."""

    def __init__(self, document: Document | None, role: Role) -> None:
        self.document, self.role = document, role

    def raw(self, *path: str) -> Any:
        return self.document.get(*path) if self.document is not None else None

    def has(self, *path: str) -> bool:
        return self.document is not None and self.document.has(*path)

    def value(self, *path: str, kind: type | tuple[type, ...] = object, default: EffectiveValue = UNSET,
              convert: Any = None) -> EffectiveValue:
        if not self.has(*path):
            return default
        raw = self.raw(*path)
        if convert is None:
            converted = raw if isinstance(raw, kind) and not isinstance(raw, bool) else None
        else:
            converted = convert(raw)
        source: Source = "yaml" if self.role == "accelerate" else "json"
        if converted is None:
            return EffectiveValue(None, "unset", self.role, tuple(path), note=f"written as {raw!r}")
        return EffectiveValue(converted, source, self.role, tuple(path))


def _names_a_json(yaml: _Reader) -> bool:
    written = yaml.raw("deepspeed_config", "deepspeed_config_file")
    return isinstance(written, str) and written.strip().lower() not in ("", "none")


def _topology(yaml: _Reader) -> dict[str, EffectiveValue]:
    if yaml.document is None:
        return {}
    # accelerate's ClusterConfig: 1 for the string "NO" (not the boolean an unquoted NO loads as), else -1,
    # which `accelerate launch` refuses unless --num_processes is passed.
    absent = (EffectiveValue(1, "accelerate default") if yaml.raw("distributed_type") == "NO" else
              EffectiveValue(None, "accelerate default", note="-1: `accelerate launch` needs --num_processes"))
    processes = yaml.value("num_processes", convert=as_int, default=absent)
    machines = yaml.value("num_machines", convert=as_int, default=EffectiveValue(1, "accelerate default"))
    rank = yaml.value("machine_rank", convert=as_int, default=EffectiveValue(0, "accelerate default"))
    per_machine = UNSET
    if processes.value is not None and machines.value:
        per_machine = EffectiveValue(processes.value // machines.value, "derived",
                                     note="num_processes // num_machines")
    return {"num_processes": processes, "num_machines": machines, "machine_rank": rank,
            "processes_per_machine": per_machine}


def _from_json(json: _Reader, yaml: _Reader, alone: bool) -> dict[str, EffectiveValue]:
    """Stage, offload, GA and clipping when a DeepSpeed JSON is used: the JSON owns them."""
    zero = ("zero_optimization",)
    stage = json.value(*zero, "stage", convert=_stage)
    if json.raw(*zero, "stage") == AUTO:
        where = (*zero, "stage")
        stage = (EffectiveValue(0, "deepspeed default", "deepspeed", where,
                                note='"auto": plain DeepSpeed drops it (accelerate would fill 2)') if alone
                 else EffectiveValue(2, "derived", "deepspeed", where, note='"auto" -> 2 by accelerate'))
    elif not json.has(*zero, "stage"):
        stage = EffectiveValue(0, "deepspeed default", note="no zero_optimization.stage")
    result = {"zero_stage": stage,
              "offload_optimizer": _json_offload(json, "offload_optimizer", "cpu_offload"),
              "offload_param": _json_offload(json, "offload_param", "cpu_offload_param")}
    gas = json.value("gradient_accumulation_steps", convert=as_int)
    if json.raw("gradient_accumulation_steps") == AUTO:
        gas = (EffectiveValue(None, "unset", "deepspeed", ("gradient_accumulation_steps",),
                              note='"auto": filled by the Trainer or accelerate') if alone else
               EffectiveValue(1, "derived", "deepspeed", ("gradient_accumulation_steps",),
                              note='"auto" -> Accelerator(gradient_accumulation_steps=...), 1 unless set'))
    elif not json.has("gradient_accumulation_steps") and not alone:
        gas = EffectiveValue(1, "accelerate default", note="accelerate adds gradient_accumulation_steps: 1")
    result["gradient_accumulation"] = gas
    clip = json.value("gradient_clipping", convert=as_float)
    if json.raw("gradient_clipping") == AUTO:
        clip = EffectiveValue(1.0, "derived", "deepspeed", ("gradient_clipping",),
                              note='"auto" -> 1.0 (accelerate; the Trainer uses max_grad_norm, default 1.0)')
    elif not json.has("gradient_clipping"):
        clip = EffectiveValue(1.0, "deepspeed default", note="1.0 since DeepSpeed 0.19.3 (0.0 before)")
    result["gradient_clipping"] = clip
    return result


def _json_offload(json: _Reader, block: str, legacy: str) -> EffectiveValue:
    path = ("zero_optimization", block, "device")
    raw = json.raw(*path)
    if raw in ("none", "cpu", "nvme"):
        return EffectiveValue(raw, "json", "deepspeed", path)
    if raw == AUTO:
        return EffectiveValue("none", "derived", "deepspeed", path, note='"auto" -> none')
    if json.raw("zero_optimization", legacy) is True:
        return EffectiveValue("cpu", "json", "deepspeed", ("zero_optimization", legacy))
    if json.has(*path):
        return EffectiveValue(None, "unset", "deepspeed", path, note=f"written as {raw!r}")
    return EffectiveValue("none", "deepspeed default")


def _from_inline(yaml: _Reader) -> dict[str, EffectiveValue]:
    """The inline `deepspeed_config` of the YAML: accelerate builds the DeepSpeed config from it."""
    ds = ("deepspeed_config",)
    stage = yaml.value(*ds, "zero_stage", convert=_stage, default=EffectiveValue(2, "accelerate default"))
    gas = yaml.value(*ds, "gradient_accumulation_steps", convert=as_int, default=EffectiveValue(
        1, "accelerate default", note="Accelerator(gradient_accumulation_steps=...), 1 unless set"))
    clip = yaml.value(*ds, "gradient_clipping", convert=as_float, default=EffectiveValue(
        1.0, "derived", note='absent -> "auto" -> 1.0 (accelerate#3807)'))
    if yaml.raw(*ds, "gradient_clipping") == AUTO:
        clip = EffectiveValue(1.0, "derived", "accelerate", ds + ("gradient_clipping",), note='"auto" -> 1.0')
    return {
        "zero_stage": stage, "gradient_accumulation": gas, "gradient_clipping": clip,
        "offload_optimizer": yaml.value(*ds, "offload_optimizer_device", convert=_device,
                                        default=EffectiveValue("none", "accelerate default")),
        "offload_param": yaml.value(*ds, "offload_param_device", convert=_device,
                                    default=EffectiveValue("none", "accelerate default")),
    }


def _batch(json: _Reader, accumulation: EffectiveValue, world: int | None) -> dict[str, EffectiveValue]:
    micro = json.value("train_micro_batch_size_per_gpu", convert=as_int)
    if json.raw("train_micro_batch_size_per_gpu") == AUTO:
        micro = EffectiveValue(None, "unset", "deepspeed", ("train_micro_batch_size_per_gpu",),
                               note='"auto": the DataLoader\'s batch_size')
    total = json.value("train_batch_size", convert=as_int)
    if json.raw("train_batch_size") == AUTO:
        total = EffectiveValue(None, "unset", "deepspeed", ("train_batch_size",),
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


def _precision(yaml: _Reader, json: _Reader, alone: bool) -> EffectiveValue:
    for block, name in (("fp16", "fp16"), ("bf16", "bf16"), ("bfloat16", "bf16")):
        if deepspeed_flag(json.raw(block, "enabled")) and not (block == "bfloat16" and json.has("bf16")):
            return EffectiveValue(name, "json", "deepspeed", (block, "enabled"))
    written = yaml.value("mixed_precision", kind=str)
    if written.is_set:
        return written
    decided_later = any(json.raw(block, "enabled") == AUTO for block in ("fp16", "bf16", "bfloat16"))
    if decided_later and alone:
        return EffectiveValue(None, "unset", note='"auto": the launcher\'s or the Trainer\'s precision')
    if yaml.document is not None:
        note = '"auto": no, unless the script or the Trainer asks for fp16/bf16' if decided_later else ""
        return EffectiveValue("no", "accelerate default", note=note)
    return EffectiveValue("no", "deepspeed default") if json.document is not None else UNSET


def _fsdp_version(yaml: _Reader, distributed_type: Any) -> EffectiveValue:
    written = yaml.value("fsdp_config", "fsdp_version", convert=lambda v: as_int(v) if not isinstance(v, str)
                         else (int(v) if v.strip() in ("1", "2") else None))
    if written.source != "unset" or yaml.has("fsdp_config", "fsdp_version"):
        return written
    return EffectiveValue(1, "accelerate default") if distributed_type == "FSDP" else UNSET


def _stage(value: Any) -> int | None:
    stage = as_int(value)
    return stage if stage in (0, 1, 2, 3) else None


def _device(value: Any) -> str | None:
    return value if value in ("none", "cpu", "nvme") else None


def render_explanation(unit: CheckContext) -> str:
    """A plain-text table of every effective value and its source, for `accelwiz check --explain`."""
    names = " + ".join(d.name for d in unit.documents) or "<no files>"
    effective = unit.effective
    rows = [("setting", "value", "source", "written at / why")]
    for name, item in effective.items():
        if item.source == "unset" and item.value is None and not item.note and not item.path:
            continue
        rows.append((name, _shown(item.value), item.source, _origin(unit, item)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [f"Effective values for {names}:"]
    for row in rows:
        cells = "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        lines.append(f"  {cells}  {row[3]}")
    if effective.json_alone:
        lines.append("  (a DeepSpeed JSON checked alone: values marked \"auto\" depend on the launcher)")
    return "\n".join(line.rstrip() for line in lines)


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _origin(unit: CheckContext, item: EffectiveValue) -> str:
    parts = []
    if item.path:
        document = unit.document(item.role)
        where = ".".join(map(str, item.path))
        if document is not None:
            where = f"{document.path.name}:{document.span(item.path).line} {where}"
        parts.append(where)
    if item.note:
        parts.append(item.note)
    return "; ".join(parts)
