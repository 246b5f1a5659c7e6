"""Read a Strategy out of an Accelerate YAML and/or a DeepSpeed JSON, tolerating any malformed value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.estimate.strategy import Strategy

if TYPE_CHECKING:
    from accelwiz.document import Document

_FSDP_SHARDING = {
    "1": "fsdp_full",
    "full_shard": "fsdp_full",
    "2": "fsdp_grad_op",
    "shard_grad_op": "fsdp_grad_op",
    "4": "fsdp_hybrid",
    "hybrid_shard": "fsdp_hybrid",
    "5": "fsdp_hybrid",
    "_hybrid_shard_zero2": "fsdp_hybrid",
    "3": "ddp",
    "no_shard": "ddp",
}


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return default


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"))


def _device(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("device")
    return (
        value.strip().lower()
        if isinstance(value, str) and value.strip().lower() in ("cpu", "nvme")
        else "none"
    )


def read_strategy(accelerate: Document | None, deepspeed: Document | None) -> Strategy | None:
    """See `strategy.strategy_from_config`."""
    if accelerate is None:
        return _from_deepspeed(deepspeed, gpus_per_node=1, nodes=1, inline={}) if deepspeed else None
    distributed = str(accelerate.get("distributed_type", default="NO")).strip().upper()
    nodes = _int(accelerate.get("num_machines"), 1)
    processes = _int(accelerate.get("num_processes"), 1)
    gpus_per_node = max(1, processes // nodes)
    if distributed == "DEEPSPEED":
        return _from_deepspeed(
            deepspeed, gpus_per_node=gpus_per_node, nodes=nodes, inline=accelerate.section("deepspeed_config")
        )
    if distributed == "FSDP":
        return _from_fsdp(accelerate.section("fsdp_config"), gpus_per_node=gpus_per_node, nodes=nodes)
    if distributed in ("MULTI_GPU", "NO"):
        world = gpus_per_node * nodes
        return Strategy("ddp" if world > 1 else "single", gpus_per_node=gpus_per_node, nodes=nodes)
    return None  # TPU, XLA, CPU, MPS...: no GPU memory plan


def _from_deepspeed(
    deepspeed: Document | None, *, gpus_per_node: int, nodes: int, inline: dict[str, Any]
) -> Strategy | None:
    zero = deepspeed.section("zero_optimization") if deepspeed is not None else {}
    if deepspeed is not None:
        stage = zero.get("stage", 0)
        optimizer, param = _device(zero.get("offload_optimizer")), _device(zero.get("offload_param"))
        if zero.get("cpu_offload") is True:  # deprecated spelling DeepSpeed still maps
            optimizer = "cpu"
    else:
        stage = inline.get("zero_stage", 2)  # accelerate's default zero_stage
        optimizer = _device(inline.get("offload_optimizer_device"))
        param = _device(inline.get("offload_param_device"))
    stage = _int(stage, 0)  # "auto" or garbage: DeepSpeed silently falls back to stage 0
    if stage not in (0, 1, 2, 3):
        return None
    world = gpus_per_node * nodes
    kind = {0: "ddp" if world > 1 else "single", 1: "zero1", 2: "zero2", 3: "zero3"}[stage]
    if kind in ("single", "ddp"):
        optimizer = "none"
    if kind != "zero3":
        param = "none"  # DeepSpeed ignores parameter offload below stage 3 (AW2xx reports it)
        optimizer = "cpu" if optimizer == "nvme" else optimizer  # and treats NVMe optimizer offload as CPU
    return Strategy(
        kind,
        offload_optimizer=optimizer,
        offload_param=param,  # type: ignore[arg-type]
        gpus_per_node=gpus_per_node,
        nodes=nodes,
    )


def _from_fsdp(fsdp: dict[str, Any], *, gpus_per_node: int, nodes: int) -> Strategy:
    version = 2 if _int(fsdp.get("fsdp_version"), 1) == 2 else 1
    if version == 2 and "fsdp_reshard_after_forward" in fsdp:
        reshard = fsdp["fsdp_reshard_after_forward"]
        kind = (
            "fsdp_grad_op"
            if reshard is False or str(reshard).lower() in ("false", "shard_grad_op")
            else "fsdp_full"
        )
    else:
        raw = fsdp.get("fsdp_sharding_strategy", fsdp.get("fsdp_reshard_after_forward", "FULL_SHARD"))
        kind = _FSDP_SHARDING.get(str(raw).strip().lower(), "fsdp_full")
    if kind == "ddp" and gpus_per_node * nodes == 1:
        kind = "single"
    offload = "cpu" if _truthy(fsdp.get("fsdp_offload_params")) else "none"
    return Strategy(
        kind,
        offload_optimizer=offload,
        offload_param=offload,  # type: ignore[arg-type]
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        fsdp_version=version,
    )


def read_precision(accelerate: Document | None, deepspeed: Document | None) -> str | None:
    """'fp32' when the config trains without 16-bit compute, 'mixed' when it asks for fp16/bf16, else None.

    A DeepSpeed JSON decides for itself (accelerate refuses `mixed_precision` beside a
    `deepspeed_config_file`): no enabled `fp16`/`bf16` block means fp32. An "auto" value is filled from the
    YAML, so it says nothing.
    """
    if deepspeed is not None:
        flags = [deepspeed.get(block, "enabled") for block in ("fp16", "bf16", "bfloat16")]
        if any(flag == "auto" for flag in flags):
            return None
        return "mixed" if any(_truthy(flag) for flag in flags) else "fp32"
    if accelerate is None:
        return None
    value = accelerate.get("mixed_precision")
    if value is False or (isinstance(value, str) and value.strip().lower() == "no"):
        return "fp32"
    return "mixed" if isinstance(value, str) and value.strip().lower() in ("fp16", "bf16", "fp8") else None


def read_micro_batch(deepspeed: Document | None) -> int | None:
    """`train_micro_batch_size_per_gpu` when it is a positive integer ("auto" and garbage: None)."""
    if deepspeed is None:
        return None
    value = _int(deepspeed.get("train_micro_batch_size_per_gpu"), 0)
    return value or None
