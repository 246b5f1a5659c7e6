"""What the HF Trainer does to a DeepSpeed config: fill its "auto" values from the Trainer arguments and refuse the
values that disagree with them.

A model (not a copy) of transformers 5 `HfTrainerDeepSpeedConfig.trainer_config_process` / `trainer_config_finalize`
/ `fill_match`, and of the accelerate 1.15 steps around them (`DeepSpeedPlugin.__post_init__` and
`set_mixed_precision`), in the order a run takes them. tests/crosscheck/test_trainer_resolver.py runs the real
classes on the same inputs and compares every outcome.

Three ways the Trainer meets a DeepSpeed config:
- `trainer`: `--deepspeed FILE` (TrainingArguments(deepspeed=...)): the Trainer fills the JSON first; accelerate's
  plugin then adds `gradient_accumulation_steps: 1` when the key is absent, fills the ZeRO "auto" keys it owns, and
  the Accelerator applies `mixed_precision` to the fp16/bf16 blocks still missing;
- `launcher`: no `--deepspeed`, the Accelerate YAML names the JSON: accelerate's plugin reads it first (GA 1 when
  absent; fp16/bf16 "auto" -> the run's mixed_precision, which is the Trainer's --fp16/--bf16 or else the YAML's),
  then `propagate_args_to_deepspeed` runs the Trainer's fill on the result;
- `inline`: the YAML's own `deepspeed_config` keys: accelerate builds the JSON (batch sizes "auto", GA and clipping
  from the YAML or "auto"), then as `launcher`.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from accelwiz import coerce
from accelwiz.config.training_args import TrainerArguments

Path_ = Literal["trainer", "launcher", "inline"]
AUTO = "auto"
HIDDEN_SIZE_KEYS = ("zero_optimization.reduce_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
                    "zero_optimization.stage3_param_persistence_threshold")


@dataclass(frozen=True)
class Mismatch:
    """A DeepSpeed value the Trainer refuses (ValueError in `trainer_config_finalize`, before the first step)."""

    key: str  # dotted DeepSpeed key
    ds_value: Any
    hf_key: str
    hf_value: Any

    @property
    def line(self) -> str:
        """transformers' own line for it."""
        return f"- ds {self.key}={self.ds_value} vs hf {self.hf_key}={self.hf_value}"


@dataclass
class TrainerResolution:
    config: dict[str, Any]
    filled: dict[str, Any] = field(default_factory=dict)  # dotted key -> what replaced "auto" (last writer wins)
    filled_by: dict[str, str] = field(default_factory=dict)  # dotted key -> "trainer" | "accelerate"
    mismatches: list[Mismatch] = field(default_factory=list)
    dtype: str = "fp32"  # HfTrainerDeepSpeedConfig.dtype(): the dtype the Trainer loads the model in
    precision_error: str | None = None  # accelerate's set_mixed_precision refusal
    open_keys: list[str] = field(default_factory=list)  # checked only at train time (num_training_steps, model)

    @property
    def precision(self) -> str:
        """The precision DeepSpeed trains in: its final fp16/bf16 blocks (DeepSpeed reads bf16 first)."""
        if _flag(get_value(self.config, "bf16.enabled")):
            return "bf16"
        if _flag(get_value(self.config, "fp16.enabled")):
            return "fp16"
        return "fp32"


def _flag(value: Any) -> bool:
    """DeepSpeed's (lax pydantic) reading of an `enabled` value: the one flag reading, `accelwiz.coerce`."""
    return coerce.flag(value) is True


def find_config_node(config: dict[str, Any], dotted: str) -> tuple[dict[str, Any] | None, str]:
    *nodes, key = dotted.split(".")
    node: Any = config
    for name in nodes:
        node = node.get(name) if isinstance(node, dict) else None
        if node is None:
            return None, key
    return (node if isinstance(node, dict) else None), key


def get_value(config: dict[str, Any], dotted: str) -> Any:
    node, key = find_config_node(config, dotted)
    return None if node is None else node.get(key)


# The Trainer arguments each calculated value is made of (a mismatch names the value, not its arguments)
_CALCULATED_FROM = {"train_batch_size (calculated)": ("per_device_train_batch_size", "gradient_accumulation_steps"),
                    "num_training_steps (calculated)": ("max_steps",)}


class _Filler:
    def __init__(self, config: dict[str, Any], result: TrainerResolution,
                 invalid: frozenset[str] = frozenset()) -> None:
        self.config, self.result = config, result
        self.invalid = invalid  # arguments transformers refuses: their default is never compared

    def _from_invalid(self, hf_key: str | None) -> bool:
        names = _CALCULATED_FROM.get(hf_key or "") or re.split(r"[|+]", hf_key or "")
        return any(name in self.invalid for name in names)

    def fill(self, dotted: str, value: Any, hf_key: str | None = None, *, must_match: bool = True,
             by: str = "trainer") -> None:
        node, key = find_config_node(self.config, dotted)
        if node is None:
            return
        if node.get(key) == AUTO:
            node[key] = value
            self.result.filled[dotted] = value
            self.result.filled_by[dotted] = by
            return
        if not must_match:
            return
        current = node.get(key)
        if current is not None and current != value and not self._from_invalid(hf_key):
            self.result.mismatches.append(Mismatch(dotted, current, hf_key or dotted, value))


def inline_config(yaml_deepspeed: dict[str, Any]) -> dict[str, Any]:
    """The JSON accelerate builds from an inline `deepspeed_config` (DeepSpeedPlugin.__post_init__)."""
    def written(key: str, default: Any) -> Any:
        value = yaml_deepspeed.get(key)
        return default if value is None else value

    stage = written("zero_stage", 2)
    # the launcher lower-cases the devices on their way to the plugin (utils/launch.py prepare_deepspeed_cmd_env)
    offload_optimizer = _lowered(written("offload_optimizer_device", "none"))
    offload_param = _lowered(written("offload_param_device", "none"))
    config: dict[str, Any] = {
        "train_batch_size": AUTO,
        "train_micro_batch_size_per_gpu": AUTO,
        "gradient_accumulation_steps": written("gradient_accumulation_steps", AUTO),
        "zero_optimization": {
            "stage": stage,
            "offload_optimizer": {"device": offload_optimizer},
            "offload_param": {"device": offload_param},
        },
    }
    clipping = written("gradient_clipping", AUTO)
    if clipping:
        config["gradient_clipping"] = clipping
    return config


def _lowered(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _accelerate_plugin(filler: _Filler) -> None:
    """DeepSpeedPlugin.__post_init__ on a config file with no launcher overrides (accelerate's env defaults)."""
    config = filler.config
    if "gradient_accumulation_steps" not in config:
        config["gradient_accumulation_steps"] = 1
    defaults = {"zero_optimization.stage": 2, "zero_optimization.offload_optimizer.device": "none",
                "zero_optimization.offload_param.device": "none",
                "zero_optimization.offload_param.nvme_path": "none",
                "zero_optimization.offload_optimizer.nvme_path": "none",
                "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
                "gradient_accumulation_steps": AUTO, "gradient_clipping": AUTO}
    for dotted, value in defaults.items():
        filler.fill(dotted, value, must_match=False, by="accelerate")


def _set_mixed_precision(filler: _Filler, mixed_precision: str) -> None:
    """DeepSpeedPlugin.set_mixed_precision."""
    config = filler.config
    if mixed_precision == "fp16" and "fp16" not in config:
        config["fp16"] = {"enabled": True, "auto_cast": True}
        filler.result.filled["fp16.enabled"], filler.result.filled_by["fp16.enabled"] = True, "accelerate"
    elif mixed_precision in ("bf16", "fp8") and "bf16" not in config:
        config["bf16"] = {"enabled": True}
        filler.result.filled["bf16.enabled"], filler.result.filled_by["bf16.enabled"] = True, "accelerate"
    if mixed_precision != "no":
        other = "bf16" if mixed_precision == "fp16" else "fp16"
        block = config.get(other, {})
        if isinstance(block, dict) and str(block.get("enabled", "False")).lower() == "true":
            filler.result.precision_error = (f"`--mixed_precision` arg cannot be set to `{mixed_precision}` when "
                                             f"`{other}` is set in the DeepSpeed config file.")
            return
    for dtype in ("fp16", "bf16"):
        config.setdefault(dtype, {"enabled": False})
    filler.fill("fp16.enabled", mixed_precision == "fp16", must_match=False, by="accelerate")
    filler.fill("bf16.enabled", mixed_precision in ("bf16", "fp8"), must_match=False, by="accelerate")


def _trainer_config_process(filler: _Filler, args: TrainerArguments, world_size: int | None) -> None:
    # The first fill (TrainingArguments.__post_init__ or create_accelerator_and_postprocess) never passes
    # auto_find_batch_size=True: only the retry after an out-of-memory does, so a fixed micro-batch that differs
    # is refused even with --auto_find_batch_size.
    micro, accumulation = args["per_device_train_batch_size"], args["gradient_accumulation_steps"]
    filler.fill("train_micro_batch_size_per_gpu", micro, "per_device_train_batch_size")
    filler.fill("gradient_accumulation_steps", accumulation, "gradient_accumulation_steps")
    if world_size is not None:
        filler.fill("train_batch_size", world_size * micro * accumulation, "train_batch_size (calculated)")
    elif get_value(filler.config, "train_batch_size") not in (None, AUTO):
        filler.result.open_keys.append("train_batch_size")  # needs the world size: no Accelerate YAML was given
    filler.fill("gradient_clipping", args["max_grad_norm"], "max_grad_norm")
    filler.fill("optimizer.params.lr", args["learning_rate"], "learning_rate")
    filler.fill("optimizer.params.betas", [args["adam_beta1"], args["adam_beta2"]], "adam_beta1+adam_beta2")
    filler.fill("optimizer.params.eps", args["adam_epsilon"], "adam_epsilon")
    filler.fill("optimizer.params.weight_decay", args["weight_decay"], "weight_decay")
    filler.fill("scheduler.params.warmup_min_lr", 0, must_match=False)
    filler.fill("scheduler.params.warmup_max_lr", args["learning_rate"], "learning_rate")
    if args["save_on_each_node"]:
        checkpoint = filler.config.get("checkpoint", {})
        filler.config["checkpoint"] = checkpoint
        if isinstance(checkpoint, dict):
            checkpoint["use_node_local_storage"] = args["save_on_each_node"]
    filler.fill("fp16.enabled", args["fp16"] or args["fp16_full_eval"], "fp16|fp16_full_eval")
    filler.fill("bf16.enabled", args["bf16"] or args["bf16_full_eval"], "bf16|bf16_full_eval")
    # transformers' dtype: Python truthiness of the values, not DeepSpeed's reading ("false" is true here)
    if bool(get_value(filler.config, "bf16.enabled")):
        filler.result.dtype = "bf16"
    elif bool(get_value(filler.config, "fp16.enabled")):
        filler.result.dtype = "fp16"
    else:
        filler.result.dtype = "fp32"


def _never_a_step_count(value: Any) -> bool:
    """A written total_num_steps no run can have: a number below 1 (transformers#29348: 0)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value < 1


def _trainer_config_finalize(filler: _Filler, args: TrainerArguments) -> None:
    """The checks of trainer_config_finalize that need no model: the scheduler's step counts."""
    for dotted in HIDDEN_SIZE_KEYS:
        if get_value(filler.config, dotted) == AUTO:
            filler.result.open_keys.append(dotted)  # the model's hidden_size fills it at train time
    max_steps = args["max_steps"]
    steps = max_steps if isinstance(max_steps, int) and max_steps > 0 else None
    total = get_value(filler.config, "scheduler.params.total_num_steps")
    if steps is not None:
        filler.fill("scheduler.params.total_num_steps", steps, "num_training_steps (calculated)")
    elif _never_a_step_count(total) and args["num_train_epochs"] > 0:
        # set_initial_training_values: max(len // accumulation, 1) updates per epoch times ceil(epochs), so the
        # num_training_steps trainer_config_finalize matches against is at least 1 whatever the data
        filler.result.mismatches.append(Mismatch("scheduler.params.total_num_steps", total,
                                                 "num_training_steps (calculated)", "at least 1"))
    elif total is not None:
        filler.result.open_keys.append("scheduler.params.total_num_steps")
    warmup = args["warmup_steps"]
    if steps is not None or warmup >= 1 or warmup == 0:
        # get_warmup_steps: int(warmup_steps) from 1 up, else ceil(steps * warmup_steps); 0 is 0 whatever the steps
        hf = int(warmup) if warmup >= 1 else (math.ceil(steps * warmup) if steps is not None else 0)
        filler.fill("scheduler.params.warmup_num_steps", max(1, hf), "warmup_steps")
    elif get_value(filler.config, "scheduler.params.warmup_num_steps") is not None:
        filler.result.open_keys.append("scheduler.params.warmup_num_steps")


def resolve_for_trainer(config: dict[str, Any], args: TrainerArguments, *, world_size: int | None, path: Path_,
                        launcher_precision: str | None) -> TrainerResolution:
    """Run the Trainer's and accelerate's fills on a copy of `config`, in the order of `path`."""
    result = TrainerResolution(copy.deepcopy(config))
    # the run stops at the invalid argument itself: a mismatch against the default it falls back to is not real
    filler = _Filler(result.config, result, frozenset(problem.name for problem in args.problems))
    mixed_precision = args.mixed_precision(launcher_precision)
    if path == "trainer":
        _trainer_config_process(filler, args, world_size)
        _accelerate_plugin(filler)
        _set_mixed_precision(filler, mixed_precision)
    else:
        _accelerate_plugin(filler)
        _set_mixed_precision(filler, mixed_precision)
        if result.precision_error is None:
            _trainer_config_process(filler, args, world_size)
    _trainer_config_finalize(filler, args)
    return result
