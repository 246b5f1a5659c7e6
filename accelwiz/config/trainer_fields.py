"""The Trainer's argument table: the `TrainingArguments` fields of transformers 5 that accelwiz models (`FIELDS`,
with their types and defaults), every field's name (`ALL_FIELDS`, for abbreviations and "known but not read"
notes), the 4.x fields and optimizers transformers 5 removed, and how one value is converted and type-checked as
HfArgumentParser/TrlParser would. The readers (command line, arguments file) are in training_args.py.

tests/crosscheck/test_trainer_resolver.py compares the table with the installed library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["int", "float", "bool", "optional_bool", "str", "deepspeed", "mapping", "fsdp"]

# fields TrainingArguments json.loads when given a string starting with "{" (its _VALID_DICT_FIELDS)
MAPPING_KINDS = ("deepspeed", "mapping")


@dataclass(frozen=True)
class FieldSpec:
    kind: Kind
    default: Any


# transformers 5 `TrainingArguments` defaults for the fields that feed DeepSpeed, accelerate and the batch.
FIELDS: dict[str, FieldSpec] = {
    "per_device_train_batch_size": FieldSpec("int", 8),
    "gradient_accumulation_steps": FieldSpec("int", 1),
    "max_grad_norm": FieldSpec("float", 1.0),
    "learning_rate": FieldSpec("float", 5e-05),
    "adam_beta1": FieldSpec("float", 0.9),
    "adam_beta2": FieldSpec("float", 0.999),
    "adam_epsilon": FieldSpec("float", 1e-08),
    "weight_decay": FieldSpec("float", 0.0),
    "fp16": FieldSpec("bool", False),
    "bf16": FieldSpec("bool", False),
    "fp16_full_eval": FieldSpec("bool", False),
    "bf16_full_eval": FieldSpec("bool", False),
    "save_on_each_node": FieldSpec("bool", False),
    "auto_find_batch_size": FieldSpec("bool", False),
    "use_cpu": FieldSpec("bool", False),
    "gradient_checkpointing": FieldSpec("optional_bool", None),
    "activation_checkpointing": FieldSpec("optional_bool", None),
    "deepspeed": FieldSpec("deepspeed", None),
    "optim": FieldSpec("str", "adamw_torch_fused"),
    "lr_scheduler_type": FieldSpec("str", "linear"),
    "warmup_steps": FieldSpec("float", 0),
    "max_steps": FieldSpec("int", -1),
    "num_train_epochs": FieldSpec("float", 3.0),
    # the evaluation and checkpoint schedule: load_best_model_at_end ties the two (rules/trainer_schedule.py)
    "load_best_model_at_end": FieldSpec("bool", False),
    "eval_strategy": FieldSpec("str", "no"),
    "save_strategy": FieldSpec("str", "steps"),
    "eval_steps": FieldSpec("float", None),
    "save_steps": FieldSpec("float", 500),
    "logging_steps": FieldSpec("float", 500),
    "save_only_model": FieldSpec("bool", False),  # what DeepSpeed/FSDP can reload (rules/trainer_wrapper.py)
    "tf32": FieldSpec("optional_bool", None),  # refused without Ampere tensor cores (rules/trainer_hardware.py)
    # FSDP through the Trainer (accelwiz.config.trainer_fsdp builds the plugin arguments from them):
    # `fsdp` is `str | None` with nargs="?", const=True, so a bare --fsdp is True and "full_shard auto_wrap" a string
    "fsdp": FieldSpec("fsdp", None),
    "fsdp_config": FieldSpec("mapping", None),
    # Liger's kernels, its fused loss among them (resolution/loss_kernel.py)
    "use_liger_kernel": FieldSpec("bool", False),
    "liger_kernel_config": FieldSpec("mapping", None),
}

# Every `TrainingArguments` field of transformers 5.x (for abbreviations and for "known but not read" notes).
_ALL_FIELD_NAMES = """
accelerator_config activation_checkpointing activation_checkpointing_kwargs adam_beta1 adam_beta2 adam_epsilon
auto_find_batch_size average_tokens_across_devices batch_eval_metrics bf16 bf16_full_eval data_seed
dataloader_drop_last dataloader_in_order dataloader_multiprocessing_context dataloader_num_workers
dataloader_persistent_workers dataloader_pin_memory dataloader_prefetch_factor ddp_backend ddp_broadcast_buffers
ddp_bucket_cap_mb ddp_find_unused_parameters ddp_static_graph ddp_timeout debug deepspeed disable_tqdm do_eval
do_predict do_train enable_jit_checkpoint eval_accumulation_steps eval_delay eval_do_concat_batches eval_on_start
eval_steps eval_strategy eval_use_gather_object fp16 fp16_full_eval fsdp fsdp_config full_determinism
gradient_accumulation_steps gradient_checkpointing gradient_checkpointing_kwargs greater_is_better hub_always_push
hub_model_id hub_private_repo hub_revision hub_strategy hub_token ignore_data_skip include_for_metrics
include_num_input_tokens_seen label_names label_smoothing_factor learning_rate length_column_name
liger_kernel_config load_best_model_at_end local_rank log_level log_level_replica log_on_each_node
logging_first_step logging_nan_inf_filter logging_steps logging_strategy lr_scheduler_kwargs lr_scheduler_type
max_grad_norm max_steps metric_for_best_model neftune_noise_alpha num_train_epochs optim optim_args
optim_target_modules output_dir parallelism_config per_device_eval_batch_size per_device_train_batch_size
prediction_loss_only project push_to_hub remove_unused_columns report_to restore_callback_states_from_checkpoint
resume_from_checkpoint run_name save_on_each_node save_only_model save_steps save_strategy save_total_limit seed
skip_memory_metrics tf32 torch_compile torch_compile_backend torch_compile_mode torch_empty_cache_steps
trackio_bucket_id trackio_space_id trackio_static_space_id train_sampling_strategy use_cache use_cpu
use_liger_kernel warmup_steps weight_decay
"""
ALL_FIELDS: frozenset[str] = frozenset(_ALL_FIELD_NAMES.split())

# TrainingArguments fields of transformers 4.x that transformers 5 no longer has, and what to write instead.
# HfArgumentParser refuses them ("Some specified arguments are not used by the HfArgumentParser", hf_argparser.py;
# "Some keys are not used" for an arguments file) unless the script's own dataclass defines them.
REMOVED_IN_5: dict[str, str] = {
    "warmup_ratio": "write --warmup_steps with the ratio (a value below 1 is a fraction of the total steps)",
    "per_gpu_train_batch_size": "write --per_device_train_batch_size",
    "per_gpu_eval_batch_size": "write --per_device_eval_batch_size",
    "no_cuda": "write --use_cpu",
    "evaluation_strategy": "write --eval_strategy",
    "overwrite_output_dir": "leave it out: the Trainer writes into an existing output_dir",
    "logging_dir": "leave it out, or set the logger's own variable (TENSORBOARD_LOGGING_DIR)",
    "save_safetensors": "leave it out: checkpoints are always safetensors",
    # transformers 4 took min_num_params > 0 as the size-based policy; 5 needs the policy named (_process_fsdp_args)
    "fsdp_min_num_params": "put min_num_params in --fsdp_config with auto_wrap_policy SIZE_BASED_WRAP",
    "fsdp_transformer_layer_cls_to_wrap": "put transformer_layer_cls_to_wrap in --fsdp_config",
    "use_mps_device": "leave it out: MPS is used when available",
    "half_precision_backend": "leave it out: mixed precision goes through accelerate",
    "fp16_backend": "leave it out: mixed precision goes through accelerate",
    "fp16_opt_level": "leave it out: apex AMP is gone",
    "use_ipex": "leave it out",
    "torchdynamo": "write --torch_compile_backend",
    "dispatch_batches": "put dispatch_batches in --accelerator_config",
    "split_batches": "put split_batches in --accelerator_config",
    "include_inputs_for_metrics": "write --include_for_metrics inputs",
    "include_tokens_per_second": "leave it out",
    "push_to_hub_token": "write --hub_token",
}

# `--optim` values: transformers 5.25's OptimizerNames (training_args.py). The field is typed `OptimizerNames | str`,
# so HfArgumentParser takes any string and `TrainingArguments.__post_init__` refuses the rest with ValueError
# ("'adamw_hf' is not a valid OptimizerNames"); tests/config/test_training_args_values.py compares the installed enum.
OPTIMIZERS: frozenset[str] = frozenset("""
adamw_torch adamw_torch_fused adamw_torch_xla adamw_torch_npu_fused adafactor adamw_anyprecision adamw_torch_4bit
adamw_torch_8bit ademamix sgd adagrad adamw_bnb_8bit adamw_8bit ademamix_8bit lion_8bit lion_32bit paged_adamw_32bit
paged_adamw_8bit paged_ademamix_32bit paged_ademamix_8bit paged_lion_32bit paged_lion_8bit rmsprop rmsprop_bnb
rmsprop_bnb_8bit rmsprop_bnb_32bit galore_adamw galore_adamw_8bit galore_adafactor galore_adamw_layerwise
galore_adamw_8bit_layerwise galore_adafactor_layerwise lomo adalomo grokadamw schedule_free_radam schedule_free_adamw
schedule_free_sgd apollo_adamw apollo_adamw_layerwise stable_adamw
""".split())
# OptimizerNames values of transformers 4.x that 5 removed, and what to write instead
REMOVED_OPTIMIZERS_IN_5: dict[str, str] = {
    "adamw_hf": "write adamw_torch (transformers' own AdamW is gone; torch's computes the same update)",
    "adamw_apex_fused": "write adamw_torch_fused (apex is no longer supported)",
}

# Bool fields whose default is true: HfArgumentParser adds a `--no_<name>` complement for them.
TRUE_BY_DEFAULT = frozenset({"dataloader_pin_memory", "eval_do_concat_batches", "logging_nan_inf_filter",
                              "remove_unused_columns", "skip_memory_metrics", "use_cache",
                              "average_tokens_across_devices", "dataloader_in_order"})

_TRUE_WORDS = ("yes", "true", "t", "y", "1")
_FALSE_WORDS = ("no", "false", "f", "n", "0")


def defaults() -> dict[str, Any]:
    return {name: spec.default for name, spec in FIELDS.items()}


def convert(name: str, text: str) -> tuple[Any, str | None]:
    """A string converted with the field's argparse type: (value, None) or (None, what is wrong)."""
    kind = FIELDS[name].kind
    if kind in ("bool", "optional_bool"):
        if text.lower() in _TRUE_WORDS:
            return True, None
        if text.lower() in _FALSE_WORDS:
            return False, None
        return None, "expected one of yes/no, true/false, t/f, y/n, 1/0"
    if kind == "int":
        try:
            return int(text), None
        except ValueError:
            return None, "invalid int value"
    if kind == "float":
        try:
            return float(text), None
        except ValueError:
            return None, "invalid float value"
    if name == "optim" and text not in OPTIMIZERS:
        removed = REMOVED_OPTIMIZERS_IN_5.get(text)
        return None, (f"removed from OptimizerNames in transformers 5; {removed}" if removed else
                      "not an OptimizerNames value of transformers 5 (TrainingArguments refuses it)")
    if kind in MAPPING_KINDS and text.startswith("{"):
        # TrainingArguments.__post_init__ json.loads a dict field given as a string starting with "{".
        try:
            return json.loads(text), None
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON ({exc.msg})"
    return text, None


def type_problem(name: str, value: Any) -> str | None:
    """A non-string value the field cannot hold (TrlParser hands it to TrainingArguments unconverted)."""
    kind = FIELDS[name].kind
    if value is None:  # Optional fields (eval_steps: float | None) take null
        optional = kind in ("optional_bool", *MAPPING_KINDS) or FIELDS[name].default is None
        return None if optional else "null is not a value for this argument"
    if kind == "int" and (isinstance(value, bool) or not (isinstance(value, int) or
                                                          (isinstance(value, float) and value.is_integer()))):
        return f"expected an integer, got {value!r}"
    if kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"expected a number, got {value!r}"
    if kind in ("bool", "optional_bool") and not isinstance(value, (bool, int)):
        return f"expected true or false, got {value!r}"
    if kind in MAPPING_KINDS and not isinstance(value, (str, dict)):
        return f"expected a path or a mapping, got {value!r}"
    if kind == "fsdp" and not isinstance(value, (str, bool, list)):
        return f"expected true, a string of options or a list, got {value!r}"
    if kind == "str" and not isinstance(value, str):
        return f"expected text, got {value!r}"
    return None
