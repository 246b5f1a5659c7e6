"""`accelwiz convert`: an equivalent Accelerate config for the other backend (DeepSpeed ZeRO <-> FSDP2).

What carries over (accelerate 1.15, DeepSpeed 0.19.8, torch FSDP2):
- ZeRO-3 <-> FSDP full shard (`fsdp_reshard_after_forward: true`), ZeRO-2 <-> SHARD_GRAD_OP
  (`fsdp_reshard_after_forward: false`); ZeRO-1 shards only the optimizer states, which FSDP cannot do alone: it
  becomes SHARD_GRAD_OP, which also shards the gradients (less memory, same maths);
- CPU offload: DeepSpeed's optimizer/parameter offload <-> `fsdp_offload_params` (FSDP2 offloads parameters,
  gradients and the optimizer step together); NVMe offload has no FSDP form;
- `zero3_init_flag` <-> `fsdp_cpu_ram_efficient_loading`; a 16-bit gathered save <-> FULL_STATE_DICT;
- precision: the YAML's (or the JSON's) fp16/bf16 becomes the other backend's.
Everything else is named as not carried. The numbers differ even where the settings match: DeepSpeed casts the
model to fp16/bf16 and keeps fp32 master weights and optimizer states in its optimizer wrapper; FSDP2 keeps the
parameters in fp32 and casts them to the compute dtype in each forward (MixedPrecisionPolicy param_dtype), with
gradients reduced in reduce_dtype.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from accelwiz.fix.edits import AddKey, DeleteKey, Edit, SetValue

Backend = Literal["deepspeed", "fsdp"]


@dataclass
class Conversion:
    yaml_edits: list[Edit] = field(default_factory=list)
    json_data: dict[str, Any] | None = None  # the DeepSpeed JSON to write (converting to DeepSpeed)
    carried: list[str] = field(default_factory=list)
    not_carried: list[str] = field(default_factory=list)


def to_fsdp(context: Any) -> Conversion:
    """From a DeepSpeed unit (the YAML, and the JSON it names) to FSDP2."""
    effective = context.effective
    conversion = Conversion()
    stage = effective.zero_stage.value
    section: dict[str, Any] = {"fsdp_version": 2}
    _shard_like_zero(stage, section, conversion)
    _offload_like_zero(effective, section, conversion)
    section["fsdp_auto_wrap_policy"] = "TRANSFORMER_BASED_WRAP"
    conversion.carried.append("wrapping: TRANSFORMER_BASED_WRAP (the model's _no_split_modules; DeepSpeed needs none)")
    yaml_ds = context.accelerate.get("deepspeed_config") if context.accelerate is not None else None
    json_doc = context.deepspeed
    _load_and_save_like_zero(stage, yaml_ds, json_doc, section, conversion)
    precision = effective.mixed_precision.value
    conversion.not_carried += _script_owned_settings(effective, json_doc)
    conversion.yaml_edits = _fsdp_yaml_edits(context, section, precision, conversion)
    from accelwiz.convert.leftovers import deepspeed_settings_not_carried, inline_settings_not_carried
    from accelwiz.convert.numerics import numerical_differences

    conversion.not_carried += inline_settings_not_carried(yaml_ds)
    conversion.not_carried += deepspeed_settings_not_carried(json_doc.data if json_doc is not None else None)
    conversion.not_carried += numerical_differences(precision, json_doc.data if json_doc is not None else None)
    return conversion


def _shard_like_zero(stage: Any, section: dict[str, Any], conversion: Conversion) -> None:
    """The ZeRO stage as FSDP2's fsdp_reshard_after_forward (ZeRO-3: full shard; ZeRO-1/2: SHARD_GRAD_OP)."""
    if stage == 3:
        section["fsdp_reshard_after_forward"] = True
        conversion.carried.append("ZeRO-3 -> full shard (fsdp_reshard_after_forward: true)")
    elif stage in (1, 2):
        section["fsdp_reshard_after_forward"] = False
        conversion.carried.append(f"ZeRO-{stage} -> SHARD_GRAD_OP (fsdp_reshard_after_forward: false)")
        if stage == 1:
            conversion.not_carried.append("ZeRO-1 shards only optimizer states; FSDP also shards the gradients")
    else:
        section["fsdp_reshard_after_forward"] = True
        conversion.not_carried.append(f"ZeRO stage {stage}: no sharding; FSDP always shards (MULTI_GPU is DDP)")


def _offload_like_zero(effective: Any, section: dict[str, Any], conversion: Conversion) -> None:
    """DeepSpeed's optimizer/parameter offload as fsdp_offload_params (CPU only: NVMe has no FSDP form)."""
    offload = {effective.offload_optimizer.value, effective.offload_param.value} - {None, "none"}
    if offload:
        section["fsdp_offload_params"] = True
        conversion.carried.append("CPU offload -> fsdp_offload_params: true (parameters, gradients and the "
                                  "optimizer step on the CPU)")
        if "nvme" in offload:
            conversion.not_carried.append("NVMe offload: FSDP offloads to CPU memory only")


def _load_and_save_like_zero(stage: Any, yaml_ds: Any, json_doc: Any, section: dict[str, Any],
                             conversion: Conversion) -> None:
    """zero3_init_flag as fsdp_cpu_ram_efficient_loading; a 16-bit gathered save as FULL_STATE_DICT."""
    init_flag = yaml_ds.get("zero3_init_flag") if isinstance(yaml_ds, dict) else None
    if init_flag is True or (init_flag is None and stage == 3):
        section["fsdp_cpu_ram_efficient_loading"] = True
        conversion.carried.append("zero3_init_flag -> fsdp_cpu_ram_efficient_loading: true")
    gathered = json_doc.get("zero_optimization", "stage3_gather_16bit_weights_on_model_save") if json_doc else (
        yaml_ds.get("zero3_save_16bit_model") if isinstance(yaml_ds, dict) else None)
    section["fsdp_state_dict_type"] = "FULL_STATE_DICT" if gathered is True else "SHARDED_STATE_DICT"


def _script_owned_settings(effective: Any, json_doc: Any) -> list[str]:
    """What DeepSpeed's config set and the script owns under FSDP: batch, accumulation, clipping, optimizer."""
    named = []
    for name in ("gradient_accumulation", "gradient_clipping", "micro_batch"):
        item = getattr(effective, name)
        if item.source in ("json", "yaml") and item.value is not None:
            named.append(f"{name} {item.value}: under FSDP the script sets it "
                         "(Accelerator(gradient_accumulation_steps=...), clip_grad_norm_, the "
                         "DataLoader's batch_size)")
    if json_doc is not None:
        for key in ("optimizer", "scheduler"):
            if isinstance(json_doc.get(key), dict):
                named.append(f"the JSON's {key} block ({json_doc.get(key, 'type')}): FSDP uses the "
                             f"script's {key}")
    return named


def _fsdp_yaml_edits(context: Any, section: dict[str, Any], precision: Any, conversion: Conversion) -> list[Edit]:
    """The YAML's edits: distributed_type FSDP, the new fsdp_config in place of the DeepSpeed one, the precision."""
    edits: list[Edit] = [SetValue(("distributed_type",), "FSDP")]
    if context.accelerate.has("deepspeed_config"):
        edits.append(DeleteKey(("deepspeed_config",)))
    if context.accelerate.has("fsdp_config"):
        edits.append(DeleteKey(("fsdp_config",)))
    edits.append(AddKey((), "fsdp_config", section))
    if precision in ("fp16", "bf16"):
        edits.append(SetValue(("mixed_precision",), precision) if context.accelerate.has("mixed_precision")
                     else AddKey((), "mixed_precision", precision))
        conversion.carried.append(f"precision {precision} -> mixed_precision: {precision}")
    return edits


def to_deepspeed(context: Any, json_name: str) -> Conversion:
    """From an FSDP unit to DeepSpeed: the YAML names a new JSON, which owns the ZeRO settings and precision."""
    effective = context.effective
    conversion = Conversion()
    stage, zero = _zero_like_fsdp(effective, conversion)
    fsdp = context.accelerate.section("fsdp_config")  # {} when it is not a mapping
    if stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = str(_written(fsdp, "state_dict_type")).upper() == \
            "FULL_STATE_DICT"
    conversion.not_carried += _wrapping_not_carried(fsdp)
    precision = effective.mixed_precision.value
    conversion.json_data = _deepspeed_json(zero, precision, conversion)
    conversion.yaml_edits = _deepspeed_yaml_edits(context, stage, fsdp, json_name, conversion)
    from accelwiz.convert.leftovers import fsdp_settings_not_carried
    from accelwiz.convert.numerics import numerical_differences

    conversion.not_carried += fsdp_settings_not_carried(fsdp)
    if precision == "fp8":
        conversion.not_carried.append("mixed_precision fp8: the JSON gets no fp8 (nor bf16) block, so DeepSpeed "
                                      'computes in fp32; write "bf16": {"enabled": true} at least')
    conversion.not_carried += numerical_differences(precision)  # accelwiz/convert/numerics.py
    return conversion


def _written(fsdp: dict[str, Any], name: str) -> Any:
    """An fsdp_config key as written, in either spelling (`fsdp_name` or `name`)."""
    return fsdp.get(f"fsdp_{name}", fsdp.get(name))


def _zero_like_fsdp(effective: Any, conversion: Conversion) -> tuple[int, dict[str, Any]]:
    """FSDP's sharding as a ZeRO stage, and fsdp_offload_params as CPU offload: (stage, zero_optimization)."""
    sharding = effective.fsdp_sharding.value
    stage = 2 if sharding in ("SHARD_GRAD_OP", "HYBRID_SHARD_ZERO2") else 0 if sharding == "NO_SHARD" else 3
    conversion.carried.append(f"{sharding or 'full shard'} -> ZeRO-{stage}")
    if sharding and sharding.startswith("HYBRID"):
        conversion.not_carried.append("hybrid sharding across nodes: ZeRO shards over all processes "
                                      "(ZeRO++ hpZ is the nearest, not set here)")
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True}
    if effective.fsdp_offload_params.value is True:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        if stage == 3:
            zero["offload_param"] = {"device": "cpu", "pin_memory": True}
        conversion.carried.append("fsdp_offload_params -> CPU offload of the optimizer"
                                  + (" and the parameters" if stage == 3 else " (parameter offload needs ZeRO-3)"))
    return stage, zero


def _wrapping_not_carried(fsdp: dict[str, Any]) -> list[str]:
    """FSDP's wrapping and activation checkpointing, which DeepSpeed does not take from its config."""
    named = [f"fsdp_{name}: DeepSpeed partitions every parameter; no wrapping"
             for name in ("transformer_layer_cls_to_wrap", "auto_wrap_policy", "min_num_params")
             if _written(fsdp, name) is not None]
    if _written(fsdp, "activation_checkpointing") is True:
        named.append("fsdp_activation_checkpointing: enable it in the script "
                     "(model.gradient_checkpointing_enable() or the Trainer's "
                     "--gradient_checkpointing); DeepSpeed's activation_checkpointing block does not "
                     "apply to Transformers models")
    return named


def _deepspeed_json(zero: dict[str, Any], precision: Any, conversion: Conversion) -> dict[str, Any]:
    """The new JSON: batch and clipping left "auto" to the launcher or the Trainer, the ZeRO block, the precision."""
    data: dict[str, Any] = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
                            "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
                            "zero_optimization": zero}
    if precision in ("fp16", "bf16"):
        data[precision] = {"enabled": True}
        conversion.carried.append(f"mixed_precision {precision} -> the JSON's {precision} block (the YAML's key goes: "
                                  "accelerate refuses it beside a deepspeed_config_file)")
    return data


def _deepspeed_yaml_edits(context: Any, stage: int, fsdp: dict[str, Any], json_name: str,
                          conversion: Conversion) -> list[Edit]:
    """The YAML's edits: distributed_type DEEPSPEED, the FSDP keys out, a deepspeed_config naming the new JSON."""
    edits: list[Edit] = [SetValue(("distributed_type",), "DEEPSPEED")]
    if context.accelerate.has("parallelism_config"):
        conversion.not_carried.append("parallelism_config (context/tensor parallel sizes): accelerate runs them "
                                      "with FSDP2 only; DeepSpeed has its own (Ulysses sequence parallelism, AutoTP)")
        edits.append(DeleteKey(("parallelism_config",)))
    for key in ("fsdp_config", "deepspeed_config", "mixed_precision"):
        if context.accelerate.has(key):
            edits.append(DeleteKey((key,)))
    ds_section: dict[str, Any] = {"deepspeed_config_file": json_name}
    if stage == 3:
        ds_section["zero3_init_flag"] = _written(fsdp, "cpu_ram_efficient_loading") is not False
    machines = context.effective.num_machines.value
    if isinstance(machines, int) and machines > 1:
        # FSDP runs torchrun on each node; DeepSpeed's default multi-node launcher (pdsh) would need a hostfile
        # and, without one, trains on the launching node alone (AW116)
        ds_section["deepspeed_multinode_launcher"] = "standard"
        conversion.carried.append("num_machines > 1 -> deepspeed_multinode_launcher: standard (torchrun on each "
                                  "node, as FSDP ran)")
    edits.append(AddKey((), "deepspeed_config", ds_section))
    return edits


def convert(yaml_path: Path, target: Backend, out: Path) -> tuple[str, str | None, Conversion]:
    """(the new YAML text, the new JSON text or None, what was carried and what not)."""
    from accelwiz.fix.yaml_edit import apply_yaml
    from accelwiz.rules.engine import check_paths

    result = check_paths([yaml_path], [])
    if result.input_errors:
        raise result.input_errors[0]
    context = next(u for u in result.units if u.accelerate is not None)
    if target == "fsdp":
        conversion = to_fsdp(context)
        json_text = None
    else:
        json_path = out.with_name(out.stem + ".ds.json")
        conversion = to_deepspeed(context, str(json_path))  # as given, like init: where `accelerate launch` runs
        json_text = json.dumps(conversion.json_data, indent=2) + "\n"
    text = yaml_path.read_text(encoding="utf-8")
    return apply_yaml(text, conversion.yaml_edits, strict_layout=False), json_text, conversion
