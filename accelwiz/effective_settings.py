"""The effective values of the settings the rules judge beyond the core ones of accelwiz.effective: ZeRO's
switches, DeepSpeed's top-level gradient and precision keys, the YAML's `zero3_init_flag`, fp8 backend and MoE
class names. Each is read once, here, the way the library that uses it reads it; the rules read the result
(`ctx.effective`), never the document, so a spelling the library accepts ("True", "SUM", "NVME") is judged as
the run sees it.

The readings, from the libraries' source (accelerate 1.15, DeepSpeed 0.19.8):
- the `zero_optimization` switches and the fp16/bf16 blocks are pydantic fields (runtime/zero/config.py
  `DeepSpeedZeroConfig`, runtime/precision_config.py): lax booleans, read with `coerce.flag`;
- `gradient_allreduce_op` is lower-cased (runtime/config.py `get_gradient_allreduce_op`), so is
  `communication_data_type` (`get_communication_data_type`);
- `prescale_gradients` is read raw (`get_prescale_gradients`) and tested for truth (`engine.postscale_gradients`
  returns `not prescale_gradients`): any non-empty string, "false" included, prescales;
- `zenflow` is on when the key holds anything but null (`zero_config.zenflow is not None`);
- the YAML's `zero3_init_flag` reaches the workers as `str(value).lower()` (utils/launch.py) and is read back
  with `str_to_bool` (`DeepSpeedPlugin.__post_init__`); absent, it follows the ZeRO stage (`is_zero3()`).

fsdp_config, parallelism_config and megatron_lm_config values are read as the plugins read the FSDP_*,
PARALLELISM_CONFIG_* and MEGATRON_LM_* variables the launcher exports (see `_fsdp_settings`, `_parallelism`).

Settings that are not written stay UNSET, so `--explain` lists only what a file says; the exceptions are the
defaults the launcher itself exports (FSDP_CPU_RAM_EFFICIENT_LOADING=true) and the sizes of a written
parallelism_config or megatron_lm_config section (1 unless written).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz import coerce
from accelwiz.config.base import AUTO
from accelwiz.effective_value import UNSET, EffectiveValue, fsdp_entry, section_entry

if TYPE_CHECKING:
    from accelwiz.effective_reader import DocumentReader

ZERO = "zero_optimization"
FP8_BACKENDS = ("TE", "MSAMP", "AO", "NO")  # accelerate's FP8BackendType

# every name this module sets on EffectiveConfig (a test keeps the dataclass and this list equal)
NAMES = ("zero3_init_flag", "zero_reduce_bucket_size", "zero_compute_grad_norm", "zero_reduce_scatter",
         "zero_legacy_stage1", "zenflow", "gradient_allreduce_op", "prescale_gradients", "gradient_predivide_factor",
         "fp16_enabled", "bf16_enabled", "fp16_master_weights_and_grads", "offload_optimizer_ratio",
         "offload_optimizer_nvme_path", "offload_param_nvme_path", "sequence_parallel_size",
         "communication_data_type", "param_dtype", "fp8_backend", "moe_layer_cls_names", "fp16_loss_scale",
         "fp16_loss_scale_window", "fp16_min_loss_scale", "optimizer_type", "scheduler_type",
         "fsdp_state_dict_type", "fsdp_auto_wrap_policy", "fsdp_min_num_params", "fsdp_activation_checkpointing",
         "fsdp_activation_checkpointing_offload", "fsdp_sync_module_states", "fsdp_cpu_ram_efficient_loading",
         "parallelism_dp_replicate_size", "parallelism_dp_shard_size", "parallelism_tp_size", "parallelism_cp_size",
         "parallelism_sp_size", "parallelism_sp_backend", "megatron_tp_degree", "megatron_pp_degree",
         "zero3_save_16bit_model", "deepspeed_hostfile", "zero_gather_16bit_weights")
PARALLELISM_SIZES = ("dp_replicate", "dp_shard", "tp", "cp", "sp")


def settings(yaml: DocumentReader, json: DocumentReader, *, uses_deepspeed: bool,
             fsdp: bool) -> dict[str, EffectiveValue]:
    """The settings of the unit that its files write; a file that is absent contributes nothing."""
    found: dict[str, EffectiveValue] = {**_yaml_settings(yaml, uses_deepspeed)}
    if fsdp:
        found.update(_fsdp_settings(yaml))
    found.update(_parallelism(yaml))
    if json.document is not None:
        found.update(_json_settings(json))
    elif uses_deepspeed:
        found.update(_yaml_nvme_paths(yaml))
    return {name: value for name, value in found.items() if value is not UNSET}


def precision_blocks(json: DocumentReader) -> dict[str, EffectiveValue]:
    """The JSON's fp16 and bf16 `enabled` flags; DeepSpeed reads the `bfloat16` block only without a `bf16` one
    (runtime/config.py `get_bfloat16_config`)."""
    if json.document is None:
        return {}
    bf16_block = "bf16" if json.has("bf16") else "bfloat16"
    return {"fp16_enabled": _flag_or_auto(json, "fp16", "enabled"),
            "bf16_enabled": _flag_or_auto(json, bf16_block, "enabled")}


def _flag_or_auto(json: DocumentReader, *path: str) -> EffectiveValue:
    if json.raw(*path) == AUTO:
        return EffectiveValue(None, "unset", "deepspeed", path, written=AUTO,
                              note='"auto": the launcher\'s or the Trainer\'s precision')
    return json.value(*path, read=coerce.flag, exact=coerce.exact_flag)


def _yaml_settings(yaml: DocumentReader, uses_deepspeed: bool) -> dict[str, EffectiveValue]:
    if yaml.document is None:
        return {}
    found = {}
    if uses_deepspeed:
        found["zero3_init_flag"] = yaml.value("deepspeed_config", "zero3_init_flag", read=coerce.flag,
                                              exact=coerce.exact_flag)
        found["moe_layer_cls_names"] = yaml.value("deepspeed_config", "deepspeed_moe_layer_cls_names",
                                                  read=coerce.text)
        # exported as str(value) and read back with str_to_bool (DeepSpeedPlugin.__post_init__)
        found["zero3_save_16bit_model"] = yaml.value("deepspeed_config", "zero3_save_16bit_model",
                                                     read=coerce.flag, exact=coerce.exact_flag)
        # passed to DeepSpeed's runner as `--hostfile str(value)` (utils/launch.py prepare_deepspeed_cmd_env)
        found["deepspeed_hostfile"] = yaml.value("deepspeed_config", "deepspeed_hostfile", read=coerce.text)
    # fp8_config keys may be written with or without the prefix the launcher adds (commands/launch.py)
    backend = section_entry(yaml.document, "fp8_config", "fp8_backend", "fp8_")
    if backend is not None:
        # exported as str(value) and read with FP8BackendType(value): the exact upper-case name
        found["fp8_backend"] = yaml.at(backend[0], backend[1], read=lambda v: coerce.choice(v, FP8_BACKENDS))
    return found


STATE_DICT_TYPES = ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT")  # StateDictType's order: 1, 2, 3
WRAP_POLICIES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")


def _fsdp_settings(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    """fsdp_config keys as `FullyShardedDataParallelPlugin.__post_init__` reads them from the FSDP_* variables the
    launcher exports (utils/launch.py, utils/dataclasses.py): flags through `str(value).lower()` and `str_to_bool`,
    the wrap policy and state dict type upper-cased (a state dict type may be its number), the size threshold with
    `int()`. Either spelling of a key (with or without `fsdp_`) counts, as in the launcher's merge."""
    def entry(name: str, read: Any, exact: Any = None, default: EffectiveValue = UNSET) -> EffectiveValue:
        found = fsdp_entry(yaml.document, name)
        return yaml.at(found[0], found[1], read=read, exact=exact) if found else default

    flag = {"read": coerce.flag, "exact": coerce.exact_flag}
    return {
        "fsdp_state_dict_type": entry("fsdp_state_dict_type", _state_dict_type),
        "fsdp_auto_wrap_policy": entry("fsdp_auto_wrap_policy", _wrap_policy),
        "fsdp_min_num_params": entry("fsdp_min_num_params", _env_integer, coerce.exact_integer),
        "fsdp_activation_checkpointing": entry("fsdp_activation_checkpointing", **flag),
        "fsdp_activation_checkpointing_offload": entry("fsdp_activation_checkpointing_offload", **flag),
        "fsdp_sync_module_states": entry("fsdp_sync_module_states", **flag),
        # `accelerate launch` exports "true" when the file does not say (its --fsdp_cpu_ram_efficient_loading default)
        "fsdp_cpu_ram_efficient_loading": entry("fsdp_cpu_ram_efficient_loading", **flag, default=EffectiveValue(
            True, "accelerate default", note="accelerate launch exports FSDP_CPU_RAM_EFFICIENT_LOADING=true")),
    }


def _parallelism(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    """`parallelism_config` sizes (when the section is written: the launcher turns --use_parallelism_config on for
    a non-empty one) and Megatron-LM degrees (when that section is written). The launcher exports each as
    str(value) and accelerate reads it back with int() (`ParallelismConfig._set_from_env`,
    `MegatronLMPlugin.__post_init__`): "2" is 2, 2.0 is refused."""
    found = {}
    if yaml.document is not None and yaml.document.section("parallelism_config"):
        one = EffectiveValue(1, "accelerate default")
        for name in PARALLELISM_SIZES:
            found[f"parallelism_{name}_size"] = yaml.value("parallelism_config", f"parallelism_config_{name}_size",
                                                           read=_int_of_text, exact=coerce.exact_integer, default=one)
        found["parallelism_sp_backend"] = yaml.value("parallelism_config", "parallelism_config_sp_backend",
                                                     read=coerce.text,
                                                     default=EffectiveValue("deepspeed", "accelerate default"))
    if yaml.document is not None and yaml.document.section("megatron_lm_config"):
        one = EffectiveValue(1, "accelerate default")
        for name in ("tp", "pp"):
            found[f"megatron_{name}_degree"] = yaml.value("megatron_lm_config", f"megatron_lm_{name}_degree",
                                                          read=_int_of_text, exact=coerce.exact_integer, default=one)
    return found


def _int_of_text(value: Any) -> int | None:
    """`int(str(value))`: an int, or a string int() reads; never a bool ("True") or a float ("2.0")."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _state_dict_type(value: Any) -> str | None:
    if isinstance(value, str) and value.isdigit() and 1 <= int(value) <= len(STATE_DICT_TYPES):
        return STATE_DICT_TYPES[int(value) - 1]
    if coerce.exact_integer(value) and 1 <= value <= len(STATE_DICT_TYPES):
        return STATE_DICT_TYPES[value - 1]
    return coerce.choice(value, STATE_DICT_TYPES, case="upper")


def _wrap_policy(value: Any) -> str | None:
    return coerce.choice(value, WRAP_POLICIES, case="upper")


def _env_integer(value: Any) -> int | None:
    """An integer the launcher exports with str() and the plugin reads back with int(): "0" is 0."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return coerce.integer(value)


def _yaml_nvme_paths(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    """The inline plugin's NVMe paths; "none" (any case) is the plugin's "no path"."""
    found = {}
    for kind in ("optimizer", "param"):
        path = yaml.value("deepspeed_config", f"offload_{kind}_nvme_path", read=_nvme_text)
        found[f"offload_{kind}_nvme_path"] = path
    return found


def _nvme_text(value: Any) -> str | None:
    text = coerce.text(value)
    return text if text is not None and text.lower() != "none" else None


def _json_settings(json: DocumentReader) -> dict[str, EffectiveValue]:
    flag = {"read": coerce.flag, "exact": coerce.exact_flag}
    found = {
        "zero_reduce_bucket_size": json.value(ZERO, "reduce_bucket_size", read=coerce.integer,
                                              exact=lambda v: coerce.integer(v) is not None),
        "zero_compute_grad_norm": json.value(ZERO, "compute_grad_norm", **flag),
        "zero_reduce_scatter": json.value(ZERO, "reduce_scatter", **flag),
        "zero_legacy_stage1": json.value(ZERO, "legacy_stage1", **flag),
        "gradient_allreduce_op": json.value("gradient_allreduce_op", read=_lower,
                                            exact=lambda v: isinstance(v, str) and v == v.lower()),
        "prescale_gradients": json.value("prescale_gradients", read=bool, exact=coerce.exact_flag),
        "gradient_predivide_factor": json.value("gradient_predivide_factor", read=coerce.number,
                                                exact=lambda v: coerce.number(v) is not None),
        "fp16_master_weights_and_grads": json.value("fp16", "fp16_master_weights_and_grads", **flag),
        "offload_optimizer_ratio": json.value(ZERO, "offload_optimizer", "ratio", read=coerce.number,
                                              exact=lambda v: coerce.number(v) is not None),
        "sequence_parallel_size": json.value("sequence_parallel_size", read=coerce.integer,
                                             exact=coerce.exact_integer),
        "communication_data_type": json.value("communication_data_type", read=_lower,
                                              exact=lambda v: isinstance(v, str) and v == v.lower()),
        "param_dtype": json.value("data_types", "param_dtype", read=coerce.text),
        # DeepSpeed looks the names up as written (`_do_optimizer_sanity_check`, `_scheduler_from_config`)
        "optimizer_type": json.value("optimizer", "type", read=_string),
        "scheduler_type": json.value("scheduler", "type", read=_string),
        **precision_blocks(json),
    }
    for key in ("loss_scale", "loss_scale_window", "min_loss_scale"):  # DeepSpeedFP16Config's float fields
        found[f"fp16_{key}"] = json.value("fp16", key, read=coerce.number, exact=lambda v: coerce.number(v) is not None)
    if json.has(ZERO, "zenflow") and json.raw(ZERO, "zenflow") is not None:
        found["zenflow"] = EffectiveValue(True, "json", "deepspeed", (ZERO, "zenflow"),
                                          written=json.raw(ZERO, "zenflow"))
    for kind in ("optimizer", "param"):
        found[f"offload_{kind}_nvme_path"] = json.value(ZERO, f"offload_{kind}", "nvme_path", read=_json_nvme_path)
    # DeepSpeedZeroConfig.gather_16bit_weights_on_model_save: the key, its alias and the deprecated fp16 name
    gather = next((k for k in GATHER_KEYS if json.has(ZERO, k)), None)
    if gather is not None:
        found["zero_gather_16bit_weights"] = _flag_or_auto(json, ZERO, gather)
    return found


GATHER_KEYS = ("stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
               "stage3_gather_fp16_weights_on_model_save")


def _json_nvme_path(value: Any) -> str | None:
    text = coerce.text(value)
    return text if text is not None and text != AUTO else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _lower(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) else None
