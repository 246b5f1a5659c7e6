"""The strategy and precision a config's files ask for, read from their effective values (the strategy itself,
its speed and the `--strategy` flag: estimate/strategy.py), on the library stack the run trains with (the
resolution's `stack`: installed, a --system profile's, or --stack; never read here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.estimate.strategy import Strategy

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.resolution.stack import Stack

_FSDP_KINDS = {"FULL_SHARD": "fsdp_full", "SHARD_GRAD_OP": "fsdp_grad_op", "HYBRID_SHARD": "fsdp_hybrid",
               "HYBRID_SHARD_ZERO2": "fsdp_hybrid", "NO_SHARD": "ddp"}


def strategy_from_effective(effective: EffectiveConfig, stack: Stack | None = None) -> Strategy | None:
    """The strategy a config asks for, from its effective values, on `stack` (None: today's libraries); None when
    it cannot be told (no files, a TPU/CPU/MPS type, a ZeRO stage DeepSpeed would not read, a DeepSpeed JSON that
    was not found).

    Nothing is parsed here: the ZeRO stage ("auto" -> 2 under accelerate), the offload devices, the FSDP version
    (either `fsdp_config` spelling) and sharding, and an unquoted `NO` are what `accelwiz/effective.py` reads.
    """
    if effective.json_alone:
        return _deepspeed_strategy(effective, stack, gpus_per_node=1, nodes=1)
    kind = effective.distributed_type.value
    if not effective.has_yaml:
        return None
    if kind is None and not effective.distributed_type.is_written:
        kind = "NO"  # a YAML without distributed_type (accelerate refuses it; the schema rules report it)
    machines, processes = effective.num_machines.value, effective.num_processes.value
    nodes = machines if machines is not None and machines >= 1 else 1
    # num_processes -1 or absent: `accelerate launch` needs --num_processes; plan for one process per machine
    total = processes if processes is not None and processes >= 1 else nodes
    gpus_per_node = max(1, total // nodes)
    if kind == "DEEPSPEED":
        return _deepspeed_strategy(effective, stack, gpus_per_node=gpus_per_node, nodes=nodes)
    if kind == "FSDP":
        sharded: Any = _FSDP_KINDS.get(effective.fsdp_sharding.value or "FULL_SHARD", "fsdp_full")
        if sharded == "ddp" and gpus_per_node * nodes == 1:
            sharded = "single"
        offload: Any = "cpu" if effective.fsdp_offload_params.value else "none"
        version = 2 if effective.fsdp_version.value == 2 else 1
        from accelwiz.estimate.fsdp_wrap import wrap_from_effective

        # the YAML's wrap policy as accelerate resolves it (none written: NO_WRAP, the whole model one unit)
        wrap = wrap_from_effective(effective) if sharded.startswith("fsdp") else {}
        return Strategy(sharded, offload_optimizer=offload, offload_param=offload, gpus_per_node=gpus_per_node,
                        nodes=nodes, fsdp_version=version,
                        fsdp_use_orig_params=effective.fsdp_use_orig_params.value is not False, **wrap)
    if kind == "NO":  # the simple launcher starts one process, whatever num_processes says (AW112)
        return Strategy("single")
    if kind == "MULTI_GPU":
        return Strategy("ddp" if gpus_per_node * nodes > 1 else "single", gpus_per_node=gpus_per_node, nodes=nodes)
    return None  # TPU, XLA, CPU, MPS...: no GPU memory plan


# the keys the HF Trainer (integrations/deepspeed.py `trainer_config_finalize`) and accelerate
# (`Accelerator._prepare_deepspeed`) fill from the model's hidden size where the JSON says "auto"
_HIDDEN_SIZE_AUTO = ("zero_reduce_bucket_size", "zero3_prefetch_bucket_size", "zero3_param_persistence_threshold")


def zero_init(effective: EffectiveConfig, stack: Stack | None) -> bool:
    """Whether transformers builds the model under deepspeed.zero.Init on the accelerate-env path (zero_init_said)."""
    return zero_init_said(effective, stack)[0]


def zero_init_said(effective: EffectiveConfig, stack: Stack | None) -> tuple[bool, str | None]:
    """Whether transformers builds the model under deepspeed.zero.Init on the accelerate-env path, and what the YAML
    said of it (None: nothing). Its from_pretrained does where `is_deepspeed_zero3_enabled()` (modeling_utils
    `get_init_context`), which holds once accelerate's plugin set the weakref. The YAML's `zero3_init_flag: false`
    kept it unset before accelerate 1.0 (an accelerate the stack does not know: today's, which sets it anyway)."""
    flag = effective.zero3_init_flag
    if flag.role != "accelerate" or not isinstance(flag.value, bool):
        return True, None
    accelerate = stack.accelerate if stack is not None else None
    shown = "accelerate " + ".".join(map(str, accelerate)) if accelerate is not None else "today's accelerate"
    said = f"the YAML's zero3_init_flag {str(flag.value).lower()}"
    if flag.value:
        return True, said
    from accelwiz.resolution.stack import ZERO3_INIT_FLAG_IGNORED_SINCE

    if accelerate is not None and accelerate < ZERO3_INIT_FLAG_IGNORED_SINCE:
        return False, f"{said} before accelerate 1.0 ({shown} honours it)"
    return True, f"{said}, ignored by {shown} (1.0+ hands transformers the DeepSpeed config whatever it says)"


def _deepspeed_strategy(effective: EffectiveConfig, stack: Stack | None, *, gpus_per_node: int,
                        nodes: int) -> Strategy | None:
    stage = effective.zero_stage.value
    if stage not in (0, 1, 2, 3):
        return None
    optimizer: Any = effective.offload_optimizer.value or "none"
    param: Any = effective.offload_param.value or "none"
    world = gpus_per_node * nodes
    kind: Any = {0: "ddp" if world > 1 else "single", 1: "zero1", 2: "zero2", 3: "zero3"}[stage]
    if kind in ("single", "ddp"):
        optimizer = "none"
    if kind != "zero3":
        param = "none"  # DeepSpeed ignores parameter offload below stage 3 (AW2xx reports it)
        optimizer = "cpu" if optimizer == "nvme" else optimizer  # and treats NVMe optimizer offload as CPU
    coordinator: dict[str, Any] = {}
    names = ("zero3_max_live_parameters", "zero3_max_reuse_distance", "zero3_prefetch_bucket_size",
             "zero3_param_persistence_threshold") if kind == "zero3" else ()
    for name in (*names, "zero_reduce_bucket_size"):  # as written and readable, else DeepSpeed's defaults
        value = getattr(effective, name)
        if isinstance(value.value, int) and value.value >= 0:
            coordinator[name] = value.value
        elif value.written == "auto" and name in _HIDDEN_SIZE_AUTO:  # the Trainer/accelerate fill it
            coordinator[name] = "auto"
    for name in ("bf16_master_weights_and_grads", "bf16_optimizer_states"):
        if kind != "single" and getattr(effective, name).value is True:  # ZeRO stages 1-3 only (config.py)
            coordinator[name] = True
            coordinator["bf16_master_note"] = "the JSON's bf16 section"
    if kind == "zero3":
        built, said = zero_init_said(effective, stack)
        coordinator["zero_init"] = built
        if said is not None:  # the YAML's flag, shown where the estimate says how the model is built
            coordinator.update(zero_init_source="yaml", zero_init_note=said)
    return Strategy(kind, offload_optimizer=optimizer, offload_param=param, gpus_per_node=gpus_per_node,
                    nodes=nodes, **coordinator)


def training_precision(effective: EffectiveConfig) -> str | None:
    """'fp32' when the config trains without 16-bit compute, 'mixed' when it asks for fp16/bf16/fp8, None when
    the files leave it to the script or the Trainer (accelerate's default, or "auto" in a DeepSpeed JSON)."""
    precision = effective.mixed_precision
    if precision.value in ("fp16", "bf16", "fp8"):
        return "mixed"
    if precision.value == "no" and precision.source in ("yaml", "json", "deepspeed default", "trainer"):
        return "fp32"
    return None
