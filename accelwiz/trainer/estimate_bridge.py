"""accelwiz's memory estimate for exactly what the trainer ran, for the run report's side-by-side.

Imported lazily by `report.estimate_for_run`, which turns any failure here into "no estimate": the comparison
is a by-product of a finished run, never a reason to fail one.
"""

from __future__ import annotations

from typing import Any

_KIND = {"NO": "single", "MULTI_GPU": "ddp", "MULTI_CPU": "ddp", "FSDP": "fsdp_full"}


def estimate_from_settings(settings: dict[str, Any]) -> dict[str, Any]:
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.models import spec_from_hf_config
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

    spec = spec_from_hf_config(settings["model_config"], name=str(settings["model"]), source="built-in trainer")
    stage = settings.get("zero_stage")
    kind = (
        f"zero{stage}"
        if settings["distributed_type"] == "DEEPSPEED" and stage
        else _KIND.get(settings["distributed_type"], "ddp" if settings["world_size"] > 1 else "single")
    )
    strategy = Strategy(
        kind=kind,
        offload_optimizer=settings.get("offload_optimizer") or "none",
        offload_param=settings.get("offload_param") or "none",
        gpus_per_node=settings["world_size"],
        nodes=1,
    )
    precision = "fp32" if settings.get("mixed_precision") in (None, "no") else "mixed"
    workload = Workload(
        model=spec, micro_batch=settings["micro_batch"], seq_len=settings["seq_len"], precision=precision
    )
    estimate = estimate_memory(workload, strategy)
    return {
        "strategy": strategy.label,
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
