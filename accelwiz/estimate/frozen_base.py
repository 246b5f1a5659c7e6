"""The frozen base of LoRA and QLoRA on the GPU: the width each frozen parameter is held in (as loaded, as
DeepSpeed casts it, as FSDP flattens it), bitsandbytes' NF4 bytes and quantization state, and TRL's cast of a
prepared QLoRA's embedding and head back to bf16. states.py counts the trainable side and sums the two."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

# bitsandbytes NF4 with double quantization (QLoRA paper §3): 4 bits per weight, one 8-bit absmax per block of
# 64 weights, and one fp32 second-level constant per 256 blocks: 4.127 bits/param.
QLORA_BYTES_PER_PARAM = 0.5 + 1 / 64 + 4 / (64 * 256)


def quant_state_bytes(workload: Workload) -> float:
    """QLoRA: the bytes of bitsandbytes' quantization state (what NF4 with double quantization adds to the
    packed 0.5 B/param: one 8-bit absmax per 64 weights, one fp32 constant per 256 absmax)."""
    if workload.regime != "qlora":
        return 0.0
    return (QLORA_BYTES_PER_PARAM - 0.5) * workload.quantized_parameters


def frozen_weight_bytes(workload: Workload, strategy: Strategy, frozen: int, compute: int) -> float:
    """Frozen base weights of LoRA and QLoRA (the NF4 block linears, the rest at `frozen_base_width`)."""
    width = frozen_base_width(workload, strategy, compute)
    if workload.regime != "qlora":
        return float(width * frozen)
    quantized = workload.quantized_parameters
    # TRL's SFTTrainer of 2024 casts the prepared fp32 embedding and LM head back to bf16 (Workload)
    cast = workload.trl_bf16_cast_parameters if width == 4 else 0
    return QLORA_BYTES_PER_PARAM * quantized + width * (frozen - quantized - cast) + 2 * cast


def trl_cast_notes(workload: Workload, strategy: Strategy, compute: int) -> list[str]:
    """The line saying TRL's cast of the prepared embedding and LM head back to bf16, where it applies."""
    cast = workload.trl_bf16_cast_parameters
    if not cast or frozen_base_width(workload, strategy, compute) != 4:
        return []
    version = ".".join(map(str, workload.stack.trl or ()))
    return [f"TRL {version}'s SFTTrainer casts the k-bit-prepared fp32 embedding and LM head back to bf16 "
            f"(peft_module_casting_to_bf16: {cast:,} parameters at 2 B; norms stay fp32)"]


def frozen_base_width(workload: Workload, strategy: Strategy, compute: int | None = None) -> int:
    """Bytes per frozen, non-quantized base parameter on the GPU.

    DeepSpeed with 16-bit compute casts every floating parameter of the module it is given to that dtype
    (0.19.8 engine.py `_configure_distributed_model` -> `_cast_module_mixed_precision`), whatever it was loaded
    in. Otherwise the dtype as loaded (`Workload.frozen_base_width`: a Trainer/TRL load, or PEFT's
    prepare_model_for_kbit_training's fp32 for QLoRA); for the built-in trainer's LoRA under FSDP with mixed
    precision the base is fp32 (a unit flattens parameters of one dtype and the adapters are fp32:
    `finetune.lora_base_dtype`; PEFT's FSDP example, `torch_dtype = quant_storage_dtype or torch.float32`),
    MixedPrecision gathering it in 16-bit; else the compute width."""
    compute = compute if compute is not None else workload.compute_width
    if strategy.is_deepspeed and workload.precision != "fp32":
        return 2
    loaded = workload.frozen_base_width
    if loaded is not None:
        return loaded
    if workload.regime == "lora" and workload.precision == "mixed" and strategy.is_fsdp:
        return 4
    return compute


def frozen_in_flat_gradient(workload: Workload, strategy: Strategy) -> bool:
    """LoRA under FSDP1 with use_orig_params (accelerate's default): the adapters share a unit with the frozen
    base, the unit's FlatParameter requires grad, and its gradient is allocated flat, frozen slots included
    (measured on an H200 as rank 0 of two: 66 sharded fp32 blocks of 388 MiB at the peak for Llama-2-7B's 32 units,
    benchmarks/results/gpu_fsdp_accelerate.jsonl). Without use_orig_params a unit cannot mix them: the adapters
    are wrapped apart (PEFT's fsdp_auto_wrap_policy, Answer.AI's policy) and the base has no gradient."""
    return (workload.regime == "lora" and strategy.is_fsdp and strategy.fsdp_version == 1
            and strategy.fsdp_use_orig_params)
