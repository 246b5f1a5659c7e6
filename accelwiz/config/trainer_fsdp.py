"""FSDP configured through the HF Trainer's own arguments (`--fsdp`, `--fsdp_config`), read as transformers 5 reads
them: `TrainingArguments._process_fsdp_args` and `_apply_legacy_fsdp_to_config` (transformers 5.24
training_args.py) build the keyword arguments of accelerate's `FullyShardedDataParallelPlugin`, which
`Trainer.create_accelerator_and_postprocess` passes to the Accelerator.

What that does, from the source:
- `fsdp` is on when truthy (a bare `--fsdp` is True); `fsdp_config` is a dict, a JSON string, or a path to a JSON
  file (opened with `open` + `json.load`); a leading `fsdp_` is stripped from every key;
- the legacy string/list `fsdp` ("full_shard auto_wrap", deprecated) becomes `fsdp_config` entries with setdefault:
  a sharding strategy -> reshard_after_forward (FSDP2: full_shard -> true, shard_grad_op -> false, the others
  raise; FSDP1: the lower-case name), offload -> cpu_offload, auto_wrap -> nothing; anything else raises;
- the version defaults to 2 (accelerate's own plugin defaults to 1); the plugin always receives fsdp_version,
  auto_wrap_policy (TRANSFORMER_BASED_WRAP, compared exactly), cpu_ram_efficient_loading (false), state_dict_type
  (FULL_STATE_DICT) and reshard_after_forward; cpu_offload only when true, activation_checkpointing only when
  written, min_num_params only with SIZE_BASED_WRAP and > 0, the class names only with TRANSFORMER_BASED_WRAP;
  FSDP1 adds forward/backward prefetch, use_orig_params and sync_module_states;
- what the plugin is not given it reads from the FSDP_* variables `accelerate launch` exported from an FSDP YAML
  (`FullyShardedDataParallelPlugin.__post_init__`, accelerate 1.15 utils/dataclasses.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments

AUTO_WRAP_POLICIES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")  # accelerate's FSDP_AUTO_WRAP_POLICY
SHARDING_STRATEGIES = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2")
_TRUE, _FALSE = ("y", "yes", "t", "true", "on", "1"), ("n", "no", "f", "false", "off", "0")


@dataclass(frozen=True)
class TrainerFsdp:
    """The Trainer's FSDP: the plugin arguments it builds, or why TrainingArguments refuses them."""

    where: str  # how --fsdp was written
    plugin: dict[str, Any] = field(default_factory=dict)  # FullyShardedDataParallelPlugin(**plugin)
    config: dict[str, Any] = field(default_factory=dict)  # fsdp_config after normalisation
    config_name: str | None = None  # the fsdp_config file, when one is named
    problem: str | None = None  # the ValueError (or open/json error) transformers raises
    xla: bool = False  # fsdp_config xla: the plugin is not built


def _bool(value: Any) -> bool | None:
    """`str_to_bool(str(value).lower())` (accelerate utils/environment.py): None where it raises."""
    text = str(value).lower()
    return True if text in _TRUE else False if text in _FALSE else None


def config_path(args: TrainerArguments) -> Path | None:
    """The JSON file `--fsdp_config` names: from the working directory, else beside the arguments file."""
    written = args["fsdp_config"]
    if not isinstance(written, str) or not written.strip():
        return None
    candidate = Path(written)
    if not candidate.is_absolute() and not candidate.is_file() and args.path is not None:
        beside = args.path.parent / candidate
        if beside.is_file():
            return beside
    return candidate


def _load_config(args: TrainerArguments) -> tuple[dict[str, Any], str | None, str | None]:
    """(fsdp_config as a dict, the file it came from, the error transformers' open/json.load raises)."""
    written = args["fsdp_config"]
    if written is None:
        return {}, None, None
    if isinstance(written, dict):
        return dict(written), None, None
    path = config_path(args)
    from accelwiz.document.read import read_text  # bounded, a regular file

    try:
        data = json.loads(read_text(path, what="the --fsdp_config JSON file"))
    except InputError as exc:
        return {}, str(path), f"--fsdp_config {written}: {exc.message}"
    except (ValueError, OSError) as exc:
        return {}, str(path), f"--fsdp_config {written} is not valid JSON: {str(exc).splitlines()[0]}"
    if not isinstance(data, dict):
        return {}, str(path), f"--fsdp_config {written} holds a {type(data).__name__}, not a mapping"
    return data, str(path), None


def trainer_fsdp(args: TrainerArguments) -> TrainerFsdp | None:
    """The Trainer's FSDP plugin arguments; None when --fsdp is off."""
    fsdp = args["fsdp"]
    if not fsdp:
        return None
    where = args.where("fsdp")
    config, name, problem = _load_config(args)
    if problem:
        return TrainerFsdp(where, config_name=name, problem=problem)
    for key in list(config):
        if key.startswith("fsdp_"):
            config[key[5:]] = config.pop(key)
    if isinstance(fsdp, (str, list)):
        problem = _apply_legacy(fsdp.split() if isinstance(fsdp, str) else list(fsdp), config)
        if problem:
            return TrainerFsdp(where, config=config, config_name=name, problem=problem)
    config.setdefault("min_num_params", 0)
    if isinstance(config.get("transformer_layer_cls_to_wrap"), str):
        config["transformer_layer_cls_to_wrap"] = [config["transformer_layer_cls_to_wrap"]]
    if config.get("xla"):
        return TrainerFsdp(where, config=config, config_name=name, xla=True)
    try:
        plugin = _plugin_args(config)
    except ValueError as exc:
        return TrainerFsdp(where, config=config, config_name=name, problem=str(exc))
    return TrainerFsdp(where, plugin, config, name)


def _apply_legacy(items: list[Any], config: dict[str, Any]) -> str | None:
    """`_apply_legacy_fsdp_to_config`: the message of the ValueError it raises, or None."""
    version = _version(config)
    for item in items:
        if str(item).upper() in SHARDING_STRATEGIES:
            if version == 2:
                if item in ("full_shard", "shard_grad_op"):  # FSDPOption values, compared as written
                    config.setdefault("reshard_after_forward", item == "full_shard")
                else:
                    return (f"`fsdp={item}` is only available with FSDP1. Set `fsdp_config['version'] = 1` to use "
                            "it, but note that FSDP1 is deprecated")
            else:
                config.setdefault("reshard_after_forward", item)
        elif item == "offload":
            config.setdefault("cpu_offload", True)
        elif item != "auto_wrap":
            return f"Unknown `fsdp` option: {item}"
    return None


def _version(config: dict[str, Any]) -> int:
    try:
        return int(config.get("version", 2))
    except (TypeError, ValueError):
        raise ValueError(f"fsdp_config version {config.get('version')!r} is not an integer") from None


def _plugin_args(config: dict[str, Any]) -> dict[str, Any]:
    """`_process_fsdp_args` after the legacy translation: the plugin's keyword arguments."""
    version = _version(config)
    plugin: dict[str, Any] = {"fsdp_version": version}
    if config.get("cpu_offload", False):
        plugin["cpu_offload"] = True
    policy = config.get("auto_wrap_policy", AUTO_WRAP_POLICIES[0])
    if policy not in AUTO_WRAP_POLICIES:
        raise ValueError(f"`auto_wrap_policy` must be one of {list(AUTO_WRAP_POLICIES)}, got {policy}.")
    plugin["auto_wrap_policy"] = policy
    classes = config.get("transformer_layer_cls_to_wrap")
    if policy == "SIZE_BASED_WRAP" and isinstance(config["min_num_params"], int) and config["min_num_params"] > 0:
        plugin["min_num_params"] = config["min_num_params"]
    elif policy == "TRANSFORMER_BASED_WRAP" and classes is not None:
        plugin["transformer_cls_names_to_wrap"] = ",".join(classes)
    plugin["cpu_ram_efficient_loading"] = _checked(config.get("cpu_ram_efficient_loading", "false"),
                                                   "cpu_ram_efficient_loading")
    plugin["state_dict_type"] = config.get("state_dict_type", "FULL_STATE_DICT")
    if "activation_checkpointing" in config:
        plugin["activation_checkpointing"] = _checked(config["activation_checkpointing"], "activation_checkpointing")
    if version == 2:
        plugin["reshard_after_forward"] = _checked(config.get("reshard_after_forward", True), "reshard_after_forward")
        return plugin
    plugin["reshard_after_forward"] = str(config.get("reshard_after_forward", "full_shard")).lower()
    plugin["forward_prefetch"] = _checked(config.get("forward_prefetch", "false"), "forward_prefetch")
    plugin["backward_prefetch"] = str(config.get("backward_prefetch", "NO_PREFETCH")).upper()
    plugin["use_orig_params"] = _checked(config.get("use_orig_params", "true"), "use_orig_params")
    plugin["sync_module_states"] = _checked(config.get("sync_module_states", "true"), "sync_module_states")
    if "limit_all_gathers" in config:
        plugin["limit_all_gathers"] = _checked(config["limit_all_gathers"], "limit_all_gathers")
    return plugin


def _checked(value: Any, key: str) -> bool:
    found = _bool(value)
    if found is None:
        raise ValueError(f"invalid truth value {str(value).lower()} (fsdp_config {key})")
    return found
