"""The DeepSpeed settings an FSDP config has no meaning for: every setting of the JSON that the conversion does
not read (accelwiz/convert/mapping.py reads the stage, the offload devices, the gathered save, the precision
switches, the batch, accumulation and clipping, and names the optimizer and scheduler blocks itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

READ = {
    "zero_optimization.stage", "zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device",
    "zero_optimization.cpu_offload", "zero_optimization.cpu_offload_param",
    "zero_optimization.stage3_gather_16bit_weights_on_model_save",
    "fp16.enabled", "bf16.enabled", "bfloat16.enabled",
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping",
}
NAMED_ELSEWHERE = ("optimizer", "scheduler")  # the conversion names these blocks itself
# settings whose loss is worth its own sentence (the numerics lines explain the precision ones)
WHY = {
    "zero_optimization.offload_optimizer.nvme_path": "FSDP offloads to CPU memory only",
    "zero_optimization.offload_param.nvme_path": "FSDP offloads to CPU memory only",
    "aio": "NVMe I/O: FSDP offloads to CPU memory only",
    "activation_checkpointing": "applies only where a model calls deepspeed.checkpointing; under FSDP keep the "
                                "script's gradient_checkpointing_enable() or set fsdp_activation_checkpointing",
    "zero_optimization.zero_hpz_partition_size": "ZeRO++ hierarchical partitioning: FSDP2 replicates across "
                                                 "nodes only through parallelism_config",
    "zero_optimization.mics_shard_size": "MiCS: FSDP2 shards within a group only through parallelism_config",
    "bf16.bf16_master_weights_and_grads": "FSDP keeps fp32 master weights (see numerics)",
    "bf16.bf16_optimizer_states": "FSDP keeps the optimizer states in the parameters' dtype, fp32",
    "torch_autocast": "accelerate runs FSDP's forward under autocast itself (see numerics)",
    "communication_data_type": "FSDP reduces in the mixed_precision dtype (see numerics)",
    "data_types": "FSDP accumulates gradients in the parameters' dtype",
}


def leaf_paths(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """('zero_optimization.offload_param.device', 'cpu') for every leaf of a nested mapping, in file order."""
    found = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        found += leaf_paths(value, path) if isinstance(value, Mapping) and value else [(path, value)]
    return found


def deepspeed_settings_not_carried(data: Mapping[str, Any] | None) -> list[str]:
    """One line per setting worth a reason, then one line naming all the others (False/null ones are not
    settings anyone asked for, and fp16's loss-scale knobs are in the numerics)."""
    if not isinstance(data, Mapping):
        return []
    explained: dict[str, str] = {}
    others = []
    for path, value in leaf_paths(data):
        top = path.split(".")[0]
        if path in READ or top in NAMED_ELSEWHERE or value is False or value is None:
            continue
        reason = next((WHY[p] for p in (path, ".".join(path.split(".")[:2]), top) if p in WHY), None)
        if reason is not None:
            explained.setdefault(next(p for p in (path, ".".join(path.split(".")[:2]), top) if p in WHY), reason)
        elif not path.startswith("fp16."):
            others.append(path)
    lines = [f"{path}: {reason}" for path, reason in explained.items()]
    if others:
        lines.append("DeepSpeed-only settings with no FSDP meaning: " + ", ".join(others))
    return lines


# fsdp_config keys (without the prefix) the conversion to DeepSpeed reads or names itself
FSDP_READ = {"version", "sharding_strategy", "reshard_after_forward", "offload_params", "state_dict_type",
             "cpu_ram_efficient_loading", "activation_checkpointing", "transformer_layer_cls_to_wrap",
             "auto_wrap_policy", "min_num_params"}
FSDP_WHY = {
    "backward_prefetch": "DeepSpeed prefetches by stage3_prefetch_bucket_size (its default here)",
    "backward_prefetch_policy": "DeepSpeed prefetches by stage3_prefetch_bucket_size (its default here)",
    "forward_prefetch": "DeepSpeed prefetches by stage3_prefetch_bucket_size (its default here)",
    "use_orig_params": "DeepSpeed's optimizer always sees the original parameters",
    "sync_module_states": "ZeRO-3 with zero3_init_flag hands rank 0's weights to every rank as it partitions",
    "limit_all_gathers": "DeepSpeed bounds in-flight gathers with stage3_max_live_parameters (its default here)",
    "activation_checkpointing_offload": "no DeepSpeed switch for an HF model",
    "mixed_precision_policy": "DeepSpeed computes in the JSON's fp16/bf16 and keeps fp32 masters; no policy",
    "ignored_modules": "ZeRO partitions every parameter",
}


def fsdp_settings_not_carried(section: Mapping[str, Any] | None) -> list[str]:
    """Every `fsdp_config` key the DeepSpeed config has no meaning for, with the reason where there is one."""
    if not isinstance(section, Mapping):
        return []
    lines = []
    for key, value in section.items():
        short = str(key).removeprefix("fsdp_")
        if short in FSDP_READ or value is None:
            continue
        lines.append(f"fsdp_config.{key}: {FSDP_WHY.get(short, 'no DeepSpeed counterpart')}")
    return lines


# the YAML's deepspeed_config keys the conversion to FSDP reads (through the effective values or itself)
INLINE_READ = {"deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device",
               "zero3_init_flag", "zero3_save_16bit_model", "gradient_accumulation_steps", "gradient_clipping"}
INLINE_WHY = {
    "deepspeed_multinode_launcher": "FSDP starts with torchrun on each node (accelerate launch / accelwiz run)",
    "deepspeed_hostfile": "FSDP starts with torchrun on each node; no hostfile",
    "deepspeed_inclusion_filter": "FSDP starts with torchrun on each node; no hostfile",
    "deepspeed_exclusion_filter": "FSDP starts with torchrun on each node; no hostfile",
    "offload_optimizer_nvme_path": "FSDP offloads to CPU memory only",
    "offload_param_nvme_path": "FSDP offloads to CPU memory only",
    "deepspeed_moe_layer_cls_names": "MoE leaf modules are a ZeRO-3 notion; FSDP wraps by "
                                     "fsdp_transformer_layer_cls_to_wrap",
}


def inline_settings_not_carried(section: Mapping[str, Any] | None) -> list[str]:
    """Every key of the YAML's `deepspeed_config` the FSDP config has no meaning for."""
    if not isinstance(section, Mapping):
        return []
    return [f"deepspeed_config.{key}: {INLINE_WHY.get(str(key), 'no FSDP counterpart')}"
            for key, value in section.items() if key not in INLINE_READ and value is not None]
