"""accelwiz's memory estimate for exactly what the trainer ran, for the run report's side-by-side.

Imported lazily by `report.estimate_for_run`, which turns any failure here into "no estimate": the comparison
is a by-product of a finished run, never a reason to fail one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig

# The distributed types as the estimator plans them: CPU DDP holds per rank what GPU DDP holds per GPU.
_AS_PLANNED = {"MULTI_CPU": "MULTI_GPU"}


def effective_from_settings(settings: dict[str, Any]) -> EffectiveConfig:
    """What the trainer ran (the Accelerator's resolved facts), as effective values with source "trainer"."""
    from accelwiz.effective import EffectiveConfig, EffectiveValue

    def ran(value: Any) -> EffectiveValue:
        return EffectiveValue(value, "trainer")

    kind = _AS_PLANNED.get(settings["distributed_type"], settings["distributed_type"])
    return EffectiveConfig(
        distributed_type=ran(kind), num_processes=ran(settings["world_size"]), num_machines=ran(1),
        zero_stage=ran(settings.get("zero_stage") or 0), offload_optimizer=ran(settings.get("offload_optimizer")),
        offload_param=ran(settings.get("offload_param")), mixed_precision=ran(settings.get("mixed_precision") or "no"),
        # the report does not carry the FSDP version: the built-in trainer's FSDP configs are FSDP2
        fsdp_version=ran(settings.get("fsdp_version", 2)), uses_deepspeed=kind == "DEEPSPEED", has_yaml=True,
        # nor the wrap policy: `init`'s FSDP configs wrap each transformer block (estimate/fsdp_wrap.py)
        fsdp_auto_wrap_policy=ran(settings.get("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP")),
    )


def estimate_from_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The estimate of what ran: the run's resolved workload (method, LoRA rank and targets, checkpointing and
    sequence as the run report records them) on the strategy and precision the Accelerator resolved."""
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.modelspec.lookup import spec_from_hf_config
    from accelwiz.estimate.configured_strategy import strategy_from_effective, training_precision
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.workload import DEFAULTS, resolve_workload

    spec = spec_from_hf_config(settings["model_config"], name=str(settings["model"]), source="built-in trainer")
    effective = effective_from_settings(settings)
    strategy = strategy_from_effective(effective)
    if strategy is None:
        raise ValueError(f"no memory plan for distributed type {settings['distributed_type']}")
    recorded = settings.get("settings") or {}  # the run's resolved workload, as run_report.json records it
    ran = {name: item["value"] for name, item in recorded.items() if name in DEFAULTS and isinstance(item, dict)}
    for name in ("micro_batch", "seq_len", "method", "gradient_checkpointing"):
        if name in settings:
            ran.setdefault(name, settings[name])
    ran["precision"] = "fp32" if (training_precision(effective) or "fp32") == "fp32" else "bf16"
    workload = to_workload(resolve_workload(flags=ran), spec)
    estimate = estimate_memory(workload, strategy, _gpu_name(settings))
    return {
        "strategy": strategy.label,
        "workload": {"method": workload.regime, "lora_rank": workload.lora_rank if workload.regime != "full" else None,
                     "gradient_checkpointing": workload.gradient_checkpointing, "seq_len": workload.seq_len,
                     "micro_batch": workload.micro_batch},
        "parameters_estimated": spec.num_parameters,
        "per_rank_allocated_bytes": estimate.allocated,
        "per_rank_total_bytes": estimate.per_gpu_total,
        "model_states_bytes": estimate.model_states,
        "activations_bytes": estimate.activations,
        "host_bytes": estimate.host_bytes,
        # On GPU, peak_memory_bytes is torch.cuda.max_memory_allocated: compare it with per_rank_allocated_bytes.
        # On CPU it is the process's peak RSS, which also holds Python, torch and the libraries (~400 MB).
        "compare": "per_rank_allocated_bytes vs peak_memory_bytes (GPU); CPU peak RSS includes the runtime",
    }


def _gpu_name(settings: dict[str, Any]) -> str | None:
    """The GPU the run trained on (its runtime beside the tensors depends on the generation); None on CPU."""
    if settings.get("device") != "cuda":
        return None
    import torch

    return torch.cuda.get_device_name(0)
