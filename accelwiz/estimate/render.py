"""How an estimate looks: a text breakdown and a comparison table (its JSON: estimate/json_report.py)."""

from __future__ import annotations

from accelwiz.estimate.cpu import CpuMemoryEstimate
from accelwiz.estimate.memory import MemoryEstimate
from accelwiz.estimate.recommend import CompareRow
from accelwiz.estimate.report import Report
from accelwiz.estimate.sizes import gib
from accelwiz.vocab import HEADROOM

ROWS = ("weights", "gradients", "optimizer_states", "paged_states", "activations", "logits", "temporaries", "buffers",
        "reserve", "runtime")
# beyond the allocated tensors; bitsandbytes' paged optimizer states are CUDA managed memory (paged_states.py)
_ON_TOP = ("paged_states", "reserve", "runtime")
_ROW_LABEL = {
    "optimizer_states": "optimizer states",
    "paged_states": "optimizer (paged)",
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
    return {**{row: live.get(row, 0) for row in ROWS if row not in _ON_TOP}, "paged_states": estimate.paged_states,
            "reserve": estimate.reserved - estimate.allocated, "runtime": estimate.runtime}


def row_bytes(estimate: MemoryEstimate, row: str) -> int:
    """A category's own size (the reserve: what the allocator holds beyond the allocated peak)."""
    return estimate.reserved - estimate.allocated if row == "reserve" else getattr(estimate, row)


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
    sizes = {row: row_bytes(estimate, row) for row in ROWS}
    lines += [f"  {_ROW_LABEL.get(row, row):<20}{gib(sizes[row]):>12}{gib(live[row]):>12}" for row in ROWS
              if row != "paged_states" or sizes[row]]  # the paged line only where a paged optimizer runs
    lines += _peak_lines(estimate, report.target.gpu_bytes if report.target is not None else None)
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



def _peak_lines(estimate: MemoryEstimate, gpu_bytes: int | None) -> list[str]:
    """The peaks as torch reports them, the long run's reserve where batches vary in length, the total, the
    phases and the host RAM."""
    phase = _PHASE_LABEL.get(estimate.peak_phase, estimate.peak_phase)
    return [
        f"  {'peak allocated':<20}{'':>12}{gib(estimate.allocated):>12}   torch max_memory_allocated",
        f"  {'peak reserved':<20}{'':>12}{gib(estimate.reserved):>12}   torch max_memory_reserved",
        *([f"  {'long run reserved':<20}{'up to':>12}{gib(estimate.reserved_long_run_on(gpu_bytes)):>12}   "
           "as the cache grows over batches of varying length (released before it fails)"]
          if estimate.cache_growth else []),
        f"  {'total (peak)':<20}{'':>12}{gib(estimate.per_gpu_total):>12}   reserved + runtime"
        + (" + paged states" if estimate.paged_states else "") + f", peak in the {phase}",
        "  phases (allocated): "
        + ", ".join(f"{_PHASE_LABEL.get(name, name)} {gib(value)}" for name, value in estimate.phases),
        f"per node host RAM     {gib(estimate.host_bytes):>12}",
    ]

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
