"""How an estimate looks: a text breakdown, a comparison table, JSON. Formatting lives here."""

from __future__ import annotations

import json
from typing import Any

from accelwiz.estimate.cpu import CpuMemoryEstimate
from accelwiz.estimate.memory import MemoryEstimate
from accelwiz.estimate.recommend import CompareRow
from accelwiz.estimate.report import Report
from accelwiz.estimate.sizes import gib
from accelwiz.estimate.verdict import MemoryVerdict
from accelwiz.vocab import HEADROOM

ROWS = ("weights", "gradients", "optimizer_states", "activations", "logits", "temporaries", "buffers", "reserve",
        "runtime")
_ON_TOP = ("reserve", "runtime")  # beyond the allocated tensors
_ROW_LABEL = {
    "optimizer_states": "optimizer states",
    "logits": "loss tail",
    "temporaries": "step temporaries",
    "buffers": "comm. buffers",
    "reserve": "allocator reserve",
    "runtime": "CUDA ctx/cuBLAS/NCCL",
}
_PHASE_LABEL = {"loading": "loading", "forward": "forward", "backward": "backward", "optimizer": "optimizer step"}


def at_peak(estimate: MemoryEstimate) -> dict[str, int]:
    """Bytes held at the step's peak by category (they sum to the total): the tensors live at the allocated
    peak, the caching allocator's reserve beyond them, and the runtime beside them."""
    live = dict(estimate.at_peak) or {row: getattr(estimate, row) for row in ROWS if row not in _ON_TOP}
    return {**{row: live.get(row, 0) for row in ROWS if row not in _ON_TOP},
            "reserve": estimate.reserved - estimate.allocated, "runtime": estimate.runtime}


def _size(estimate: MemoryEstimate, row: str) -> int:
    return estimate.reserved - estimate.allocated if row == "reserve" else getattr(estimate, row)


def peak_json(estimate: MemoryEstimate, device_total: int | None) -> dict[str, Any]:
    """`estimate.peak`: the allocated and reserved peaks, the runtime beside them and the GPU's memory, in
    bytes, with the phase each is reached in (the runtime is held from CUDA's start, through every phase)."""
    return {
        "allocated": estimate.allocated,
        "reserved": estimate.reserved,
        "runtime": estimate.runtime,
        "runtime_parts": dict(estimate.runtime_parts),
        "total": estimate.per_gpu_total,
        "device_total": device_total,
        "phase": {"allocated": estimate.peak_phase, "reserved": estimate.peak_phase, "runtime": "every"},
    }


def render_text(report: Report) -> str:
    estimate, recommendation = report.shown, report.advice
    if isinstance(estimate, CpuMemoryEstimate):
        return render_cpu_text(report, estimate)
    w = estimate.workload
    spec = w.model
    lines = [
        f"{spec.name}: {spec.num_parameters:,} parameters"
        + (
            f" ({spec.active_parameters:,} active per token)"
            if spec.active_parameters != spec.num_parameters
            else ""
        )
        + f"; {w.trainable_parameters:,} trainable",
        f"{w.regime}, micro-batch {w.micro_batch} × seq {w.seq_len}, {w.precision}, {w.optimizer}, "
        f"{w.attention} attention" + (", gradient checkpointing" if w.gradient_checkpointing else ""),
        f"{estimate.strategy.label} on {estimate.strategy.gpus_per_node} GPU(s) × {estimate.strategy.nodes} "
        f"node(s)",
        *([f"not as asked: {', '.join(recommendation.changes)} (the recommendation's cheapest change that fits)"]
          if recommendation is not None and recommendation.best is estimate and recommendation.changes else []),
        "",
        f"per GPU{'size':>25}{'at peak':>12}",
    ]
    live = at_peak(estimate)
    sizes = {row: _size(estimate, row) for row in ROWS}
    lines += [f"  {_ROW_LABEL.get(row, row):<20}{gib(sizes[row]):>12}{gib(live[row]):>12}" for row in ROWS]
    phase = _PHASE_LABEL.get(estimate.peak_phase, estimate.peak_phase)
    lines += [
        f"  {'peak allocated':<20}{'':>12}{gib(estimate.allocated):>12}   torch max_memory_allocated",
        f"  {'peak reserved':<20}{'':>12}{gib(estimate.reserved):>12}   torch max_memory_reserved",
        f"  {'total (peak)':<20}{'':>12}{gib(estimate.per_gpu_total):>12}   reserved + runtime, peak in the {phase}",
        "  phases (allocated): "
        + ", ".join(f"{_PHASE_LABEL.get(name, name)} {gib(value)}" for name, value in estimate.phases),
        f"per node host RAM     {gib(estimate.host_bytes):>12}",
    ]
    if estimate.nvme_bytes:
        lines.append(f"per node NVMe         {gib(estimate.nvme_bytes):>12}")
    lines += ["", report.verdict]
    if recommendation is not None:
        lines.append(f"recommendation: {recommendation.reason}")
        if recommendation.max_micro_batch is not None:
            lines.append(
                f"largest micro-batch that fits with {recommendation.best.strategy.label}: "  # type: ignore[union-attr]
                f"{recommendation.max_micro_batch}"
            )
    lines += ["", "assumptions:", *(f"  - {a}" for a in estimate.assumptions)]
    return "\n".join(lines)


_COMPARE_COLUMNS = ("strategy", "wts", "grad", "opt", "act", "oth", "total", "host", "fits", "as run")
_COMPARE_LEGEND = ("wts weights, grad gradients, opt optimizer, act activations+logits,\n"
                   "oth buffers+allocator reserve+runtime, total: reserved + runtime, host: RAM per node;\n"
                   f"fits: yes, tight (less than {1 - HEADROOM:.0%} left) or no; as run: what the recommendation "
                   "would change for that strategy\n(ckpt: gradient checkpointing on; mb N xK: micro-batch N with "
                   "K times the accumulation), as asked where nothing makes it fit")


def short_changes(changes: tuple[str, ...]) -> str:
    """The ladder's changes in a table cell: 'ckpt', 'mb 2 x4', 'ckpt, mb 2 x4'; 'as asked' without any."""
    cells = []
    for change in changes:
        if change.startswith("gradient checkpointing"):
            cells.append("ckpt")
        elif change.startswith("micro-batch"):  # 'micro-batch 8 -> 2 with gradient accumulation x4 (...)'
            words = change.split()
            cells.append(f"mb {words[3]} {words[7]}")
    return ", ".join(cells) or "as asked"


def render_compare(rows: list[CompareRow]) -> str:
    """All strategies side by side, fastest first, each as the recommendation would run it: a plain aligned
    table (rich would cost 30 ms of startup)."""
    body = [
        (e.strategy.short_label,
         *(_g(v) for v in (e.weights, e.gradients, e.optimizer_states, e.activations + e.logits,
                           e.buffers + e.overhead, e.per_gpu_total, e.host_bytes)),
         "?" if row.verdict is None else row.verdict.short(), short_changes(row.changes))
        for row in rows
        for e in (row.estimate,)
    ]
    widths = [max(len(row[i]) for row in (_COMPARE_COLUMNS, *body)) for i in range(len(_COMPARE_COLUMNS))]

    def line(cells: tuple[str, ...]) -> str:
        first, *rest = cells
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    rule = "  ".join("-" * w for w in widths)
    title = "GiB per GPU by strategy, fastest first"
    return "\n".join([title, line(_COMPARE_COLUMNS), rule, *map(line, body), "", _COMPARE_LEGEND])


def _g(value: float) -> str:
    return f"{value / 2**30:.1f}"


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
        },
        # live at the peak, summing to the total; `sizes` are the categories' own sizes
        "per_gpu_bytes": {**at_peak(estimate), "total": estimate.per_gpu_total},
        "sizes": {row: _size(estimate, row) for row in ROWS},
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
    estimate, recommendation, compare, target = report.shown, report.advice, report.rows, report.target
    w, spec = estimate.workload, estimate.workload.model
    data: dict[str, Any] = {
        "model": {
            "name": spec.name,
            "family": spec.family,
            "parameters": spec.num_parameters,
            "active_parameters": spec.active_parameters,
            "largest_layer_parameters": spec.largest_layer_parameters,
            "source": spec.source,
        },
        "workload": {
            "micro_batch": w.micro_batch,
            "seq_len": w.seq_len,
            "regime": w.regime,
            "lora_rank": w.lora_rank if w.regime != "full" else None,
            "lora_dropout": w.lora_dropout if w.regime != "full" else None,
            "precision": w.precision,
            "optimizer": w.optimizer,
            "gradient_checkpointing": w.gradient_checkpointing,
            "attention": w.attention,
            "trainable_parameters": w.trainable_parameters,
            # the loss tail follows it (Workload.copies_shifted_logits); null: today's transformers assumed
            "transformers": ".".join(map(str, w.transformers_version)) if w.transformers_version else None,
        },
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
            "gpu_memory": report.judged.gpu.verdict if report.judged and report.judged.gpu else None,
            "host_ram": report.judged.host.verdict if report.judged and report.judged.host else None,
        },
        # what the GPU verdict judged: reserved + runtime, or allocated + runtime where the allocator retries
        "gpu_need_bytes": report.judged.gpu.need if report.judged and report.judged.gpu else None,
        "allocator_retries": report.judged.gpu.retries if report.judged and report.judged.gpu else None,
    }
    if recommendation is not None:
        data["recommendation"] = {
            "strategy": None if recommendation.best is None else recommendation.best.strategy.label,
            "max_micro_batch": recommendation.max_micro_batch,
            "reason": recommendation.reason,
            # how the recommended workload differs from the one asked; another method that would fit (not applied)
            "changes": list(recommendation.changes),
            "suggestions": list(recommendation.suggestions),
            "gradient_checkpointing": None if recommendation.best is None
            else recommendation.best.workload.gradient_checkpointing,
            "micro_batch": None if recommendation.best is None else recommendation.best.workload.micro_batch,
            "accumulation_factor": recommendation.accumulation_factor,
        }
    if compare is not None:
        data["compare"] = [  # each strategy as the recommendation's ladder would run it, and what it changed
            {**estimate_json(row.estimate), "fits": None if row.verdict is None else row.verdict.runs,
             "verdict": None if row.verdict is None else row.verdict.verdict, "changes": list(row.changes),
             "micro_batch": row.estimate.workload.micro_batch,
             "gradient_checkpointing": row.estimate.workload.gradient_checkpointing}
            for row in compare
        ]
    if trace is not None:
        data["trace"] = trace
    return json.dumps(data, indent=2)


def _mib_or_gib(value: float) -> str:
    return f"{value / 2**20:.0f} MiB" if value < 2**30 else gib(value)


def render_cpu_text(report: Report, estimate: CpuMemoryEstimate) -> str:
    """A CPU run: each process's tensors and baseline in host RAM, the machine's total, the verdict on its RAM."""
    w, strategy = estimate.workload, estimate.strategy
    lines = [
        f"{w.model.name}: {w.model.num_parameters:,} parameters; {w.trainable_parameters:,} trainable",
        f"{w.regime}, micro-batch {w.micro_batch} × seq {w.seq_len}, {w.precision}, {w.optimizer}, "
        f"{w.attention} attention" + (", gradient checkpointing" if w.gradient_checkpointing else ""),
        f"{strategy.label} on {estimate.processes} CPU process(es) × {strategy.nodes} machine(s): no GPU, every "
        "tensor in host RAM",
        "",
        f"per process (host RAM){'size':>10}{'at peak':>12}",
    ]
    live = at_peak(estimate)
    tensors = [row for row in ROWS if row not in _ON_TOP]
    lines += [f"  {_ROW_LABEL.get(row, row):<20}{_mib_or_gib(getattr(estimate, row)):>12}"
              f"{_mib_or_gib(live[row]):>12}" for row in tensors]
    phase = _PHASE_LABEL.get(estimate.peak_phase, estimate.peak_phase)
    lines += [
        f"  {'Python/torch/libs':<20}{_mib_or_gib(estimate.baseline_bytes):>12}"
        f"{_mib_or_gib(estimate.baseline_bytes):>12}   measured (estimate/cpu.py)",
        f"  {'peak per process':<20}{'':>12}{_mib_or_gib(estimate.per_process):>12}   peak RSS, tensors' peak in "
        f"the {phase}",
        "  phases (tensors): "
        + ", ".join(f"{_PHASE_LABEL.get(name, name)} {_mib_or_gib(value)}" for name, value in estimate.phases),
        f"per machine host RAM  {gib(estimate.host_bytes):>12}   {estimate.processes} x "
        f"{_mib_or_gib(estimate.per_process)} + {_mib_or_gib(estimate.launcher_bytes)} (accelerate launch, accelwiz "
        "run)",
        "",
        report.verdict,
    ]
    if report.advice is not None:
        lines.append(f"recommendation: {report.advice.reason}")
    lines += ["", "assumptions:", *(f"  - {a}" for a in estimate.assumptions)]
    return "\n".join(lines)
