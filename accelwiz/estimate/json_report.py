"""An estimate as JSON: the document `accelwiz estimate --format json` prints (its text: estimate/render.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from accelwiz.estimate.cpu import CpuMemoryEstimate
from accelwiz.estimate.render import ROWS, at_peak, row_bytes

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate
    from accelwiz.estimate.recommend import CompareRow, Recommendation
    from accelwiz.estimate.report import Report
    from accelwiz.estimate.workload import Workload
    from accelwiz.modelspec.spec import ModelSpec


def peak_json(estimate: MemoryEstimate, device_total: int | None) -> dict[str, Any]:
    """`estimate.peak`: the allocated and reserved peaks, the runtime beside them and the GPU's memory, in
    bytes, with the phase each is reached in (the runtime is held from CUDA's start, through every phase);
    `reserved_long_run` is what `max_memory_reserved` may reach after a long run of batches of varying length on
    this GPU (estimate/varying_lengths.py), `reserved` where every batch has one length."""
    return {
        "allocated": estimate.allocated,
        "reserved": estimate.reserved,
        "reserved_long_run": estimate.reserved_long_run_on(device_total),
        "runtime": estimate.runtime,
        "runtime_parts": dict(estimate.runtime_parts),
        "total": estimate.per_gpu_total,
        "device_total": device_total,
        "phase": {"allocated": estimate.peak_phase, "reserved": estimate.peak_phase, "runtime": "every"},
    }


def estimate_json(estimate: MemoryEstimate) -> dict[str, Any]:
    s = estimate.strategy
    return {
        "strategy": {
            "kind": s.kind,
            "label": s.label,
            "offload_optimizer": s.offload_optimizer,
            "offload_param": s.offload_param,
            "gpus_per_node": s.gpus_per_node,
            "nodes": s.nodes,
            "fsdp_version": s.fsdp_version,
            # ZeRO-3: whether the model is built under deepspeed.zero.Init, and who said so (default|yaml|flag)
            "zero_init": {"value": s.zero_init, "source": s.zero_init_source, "note": s.zero_init_note}
            if s.kind == "zero3" else None,
            # FSDP: "block" (a unit per transformer block) or "none" (the whole model one unit), and who said so
            "fsdp_wrap": {"value": s.fsdp_wrap, "source": s.fsdp_wrap_source, "note": s.fsdp_wrap_note}
            if s.is_fsdp else None,
            # DeepSpeed: its bf16 section's master copy and optimizer states in bf16, and who said so ("": off)
            **{name: getattr(s, name) if s.is_deepspeed else None
               for name in ("bf16_master_weights_and_grads", "bf16_optimizer_states", "bf16_master_note")},
        },
        # live at the peak, summing to the total; `sizes` are the categories' own sizes
        "per_gpu_bytes": {**at_peak(estimate), "total": estimate.per_gpu_total},
        "sizes": {row: row_bytes(estimate, row) for row in ROWS},
        "peak_phase": estimate.peak_phase,
        "phases": dict(estimate.phases),
        "host_bytes_per_node": estimate.host_bytes,
        "nvme_bytes_per_node": estimate.nvme_bytes,
        "assumptions": list(estimate.assumptions),
        # a CPU run (no GPU): the per-GPU fields are each process's tensors in host RAM
        "cpu": None if not isinstance(estimate, CpuMemoryEstimate) else {
            "processes_per_machine": estimate.processes,
            "tensors_bytes_per_process": estimate.allocated,
            "baseline_bytes_per_process": estimate.baseline_bytes,
            "per_process_bytes": estimate.per_process,
            "launcher_bytes_per_machine": estimate.launcher_bytes,
        },
    }


def render_json(report: Report, trace: dict[str, Any] | None = None) -> str:
    estimate, target, judged = report.shown, report.target, report.judged
    data: dict[str, Any] = {
        "model": _model_json(estimate.workload.model),
        "workload": _workload_json(estimate.workload),
        "estimate": {**estimate_json(estimate), "peak": peak_json(estimate, target and target.gpu_bytes)},
        "target": None
        if target is None
        else {
            "gpu_memory_bytes": target.gpu_bytes,
            "source": target.description,
            "host_memory_bytes": target.host_bytes,
        },
        "verdict": report.verdict,
        "fits": report.fits,
        # fits / tight / does not fit for each resource (null: no capacity to judge against)
        "verdicts": {
            "gpu_memory": judged.gpu.verdict if judged and judged.gpu else None,
            "host_ram": judged.host.verdict if judged and judged.host else None,
        },
        # what the GPU verdict judged: reserved + runtime, or allocated + runtime where the allocator retries
        "gpu_need_bytes": judged.gpu.need if judged and judged.gpu else None,
        "allocator_retries": judged.gpu.retries if judged and judged.gpu else None,
    }
    if report.advice is not None:
        data["recommendation"] = _recommendation_json(report.advice)
    if report.rows is not None:
        data["compare"] = [_compare_row_json(row) for row in report.rows]
    if trace is not None:
        data["trace"] = trace
    return json.dumps(data, indent=2)


def _model_json(spec: ModelSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "family": spec.family,
        "parameters": spec.num_parameters,
        "active_parameters": spec.active_parameters,
        "largest_layer_parameters": spec.largest_layer_parameters,
        "source": spec.source,
    }


def _workload_json(w: Workload) -> dict[str, Any]:
    return {
        "micro_batch": w.micro_batch,
        "gradient_accumulation": w.gradient_accumulation,
        "seq_len": w.seq_len,
        "regime": w.regime,
        "lora_rank": w.lora_rank if w.regime != "full" else None,
        "lora_dropout": w.lora_dropout if w.regime != "full" else None,
        # PEFT's modules_to_save and their trainable copies' parameters (part of trainable_parameters)
        "modules_to_save": list(w.modules_to_save) if w.regime != "full" else None,
        "saved_parameters": w.saved_parameters if w.regime != "full" else None,
        "precision": w.precision,
        "optimizer": w.optimizer,
        "gradient_checkpointing": w.gradient_checkpointing,
        "attention": w.attention,
        "trainable_parameters": w.trainable_parameters,
        # the caching allocator's growth over batches of varying length, and its expandable segments
        # (varying_lengths.py, reserve.py)
        "varying_lengths": w.varying_lengths,
        "expandable_segments": w.expandable_segments,
        # the library versions the estimate follows (resolution/stack.py: installed, or --stack): the loss tail
        # follows transformers' (Workload.copies_shifted_logits), QLoRA's activations bitsandbytes'
        # (Workload.keeps_4bit_inputs), a prepared QLoRA's embedding TRL's (trl_bf16_cast_parameters); null: absent
        # (TRL: not said), today's assumed
        "stack": {name: w.stack.as_json()[name] for name in ("transformers", "bitsandbytes", "trl")},
    }


def _recommendation_json(recommendation: Recommendation) -> dict[str, Any]:
    best = recommendation.best
    return {
        "strategy": None if best is None else best.strategy.label,
        "max_micro_batch": recommendation.max_micro_batch,
        "reason": recommendation.reason,
        # how the recommended workload differs from the one asked; another method that would fit (not applied)
        "changes": list(recommendation.changes),
        "suggestions": list(recommendation.suggestions),
        "gradient_checkpointing": None if best is None else best.workload.gradient_checkpointing,
        "micro_batch": None if best is None else best.workload.micro_batch,
        "accumulation_factor": recommendation.accumulation_factor,
    }


def _compare_row_json(row: CompareRow) -> dict[str, Any]:
    """A strategy as the recommendation's ladder would run it, and what it changed."""
    return {**estimate_json(row.estimate), "fits": None if row.verdict is None else row.verdict.runs,
            "verdict": None if row.verdict is None else row.verdict.verdict, "changes": list(row.changes),
            "micro_batch": row.estimate.workload.micro_batch,
            "gradient_checkpointing": row.estimate.workload.gradient_checkpointing}
