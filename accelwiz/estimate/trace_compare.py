"""The trace beside the analytic estimate: the traced step sharded as the strategy shards it, plus CUDA constants.

The trace (trace.py) is one unsharded process without CUDA. To put it beside `estimate_memory` for a
strategy, its categories are divided as the strategy divides them (ZeRO-1: optimizer states; ZeRO-2 and
FSDP shard-grad-op: and gradients; ZeRO-3 and FSDP full/hybrid: and parameters; over the shard degree), the
analytic model's communication buffers are added (they are not in a single-process trace), and the same
runtime (CUDA context, cuBLAS, NCCL: runtime.py) is put on top. Activations are per GPU already. The reserved
peak is the trace's caching-allocator replay (allocator.py), its reserve beyond the static bytes (parameters,
optimizer states) applied to the sharded step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accelwiz.estimate.memory import process_runtime
from accelwiz.estimate.memory_notes import PHASE_LABEL

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.trace_result import TraceResult

ROWS = ("weights", "gradients", "optimizer_states", "activations", "peak", "reserved", "total")
_LABEL = {
    "optimizer_states": "optimizer states",
    "activations": "activations+logits",
    "peak": "peak allocated",
    "reserved": "peak reserved",
    "total": "total per GPU",
}


def analytic_categories(estimate: MemoryEstimate) -> dict[str, int]:
    """The analytic estimate in the trace's categories: MemTracker has no separate logits, so they count as
    activations, and the allocated peak is what the trace's peak measures (no CUDA context or allocator slack)."""
    return {
        "weights": estimate.weights,
        "gradients": estimate.gradients,
        "optimizer_states": estimate.optimizer_states,
        "activations": estimate.activations + estimate.logits,
        "peak": estimate.allocated,
        "reserved": estimate.reserved,
    }


@dataclass(frozen=True)
class TraceComparison:
    """Analytic vs traced bytes per GPU by category, the traced peak's phase, and notes."""

    analytic: dict[str, int]
    traced: dict[str, int]
    analytic_phase: str
    traced_phase: str
    trace: TraceResult
    notes: tuple[str, ...] = ()

    def difference(self, row: str) -> float | None:
        traced = self.traced[row]
        return None if traced == 0 else (self.analytic[row] - traced) / traced

    def as_dict(self) -> dict[str, Any]:
        return {
            "analytic": self.analytic,
            "traced": self.traced,
            "difference": {row: self.difference(row) for row in ROWS},
            "analytic_peak_phase": self.analytic_phase,
            "traced_peak_phase": self.traced_phase,
            "trace": self.trace.as_dict(),
            "notes": [*self.trace.notes, *self.notes],
        }


def compare(estimate: MemoryEstimate, trace: TraceResult) -> TraceComparison:
    """Shard the trace like `estimate.strategy`, add its buffers and overhead, and pair it with `estimate`."""
    strategy = estimate.strategy
    widen, notes = _widths(estimate, trace)
    divide = _divisors(strategy)
    per_gpu = _per_gpu(estimate, widen, divide)
    phases = {phase: per_gpu(snap.bytes) for phase, snap in trace.phase_peaks.items()}
    traced_phase = max(phases, key=lambda phase: phases[phase])
    peak = phases[traced_phase]
    reserved, reserve_notes = _reserved(estimate, trace, traced_phase, peak, per_gpu)
    traced = {
        **_traced_states(estimate, trace, widen, divide),
        "activations": trace.activations,
        "peak": peak,
        "reserved": reserved,
        "total": reserved + process_runtime(strategy).total,
    }
    analytic = {**analytic_categories(estimate), "total": estimate.per_gpu_total}
    notes += reserve_notes
    if strategy.world_size > 1:
        sharded = ", ".join(k for k, d in divide.items() if d > 1) or "nothing"
        notes.append(f"sharding over {strategy.shard_degree}: {sharded} divided")
    return TraceComparison(analytic, traced, estimate.peak_phase, traced_phase, trace, tuple(notes))


# A traced category's bytes -> the strategy's bytes per GPU: times its width factor, over its shard divisor.
PerGpu = Callable[[dict[str, int]], int]


def _widths(estimate: MemoryEstimate, trace: TraceResult) -> tuple[dict[str, float], list[str]]:
    """How much wider than traced each state is, with the notes that say why. DeepSpeed and FSDP run mixed
    precision as a 16-bit model, traced in bf16 (TraceSettings.from_workload); their states are wider than the
    traced bf16 ones: explicit per-byte corrections. DeepSpeed keeps a master copy of a bf16 model too."""
    strategy, workload = estimate.strategy, estimate.workload
    traced_bf16 = trace.settings.precision == "bf16"
    if strategy.is_deepspeed and workload.precision == "bf16" and traced_bf16:
        from accelwiz.estimate.deepspeed_step import deepspeed_state_widths

        master, state = deepspeed_state_widths(workload, strategy)  # its master + Adam m, v over the traced m, v
        return {"parameters": 1.0, "gradients": 1.0, "optimizer": (master + 2 * state) / 4}, [
            f"DeepSpeed: a bf16 model still gets a {master}-byte master copy and {state}-byte Adam states "
            f"in its ZeRO optimizer ({master + 2 * state} B/param over the traced 4)"
        ]
    if workload.precision == "mixed" and traced_bf16 and strategy.is_deepspeed:
        return {"parameters": 1.0, "gradients": 1.0, "optimizer": 3.0}, [  # fp32 master + m + v = 12 B/param, traced 4
            "DeepSpeed: traced as its 16-bit model; optimizer states scaled from the traced bf16 "
            "Adam (4 B/param) to fp32 master + Adam (12 B/param)"
        ]
    if workload.precision == "mixed" and traced_bf16:
        return {"parameters": 2.0, "gradients": 2.0, "optimizer": 2.0}, [
            "FSDP: traced with bf16 compute; parameters, gradients and Adam states scaled to the fp32 shards FSDP "
            "keeps (x2)"
        ]
    return {"parameters": 1.0, "gradients": 1.0, "optimizer": 1.0}, []


def _divisors(strategy: Strategy) -> dict[str, int]:
    """Each traced category's shard degree under `strategy` (1: every GPU holds all of it)."""
    n = strategy.shard_degree
    return {
        "parameters": n if strategy.shards_parameters else 1,
        "autocast_copies": 1,
        "gradients": n if strategy.shards_gradients else 1,
        "optimizer": n if strategy.shards_optimizer else 1,
    }


def _per_gpu(estimate: MemoryEstimate, widen: dict[str, float], divide: dict[str, int]) -> PerGpu:
    """A traced snapshot's bytes on one GPU: widened, sharded, the offloaded categories left out, plus the
    analytic model's communication buffers (not in a single-process trace)."""
    strategy = estimate.strategy
    offloaded = strategy.offload_optimizer != "none"

    def per_gpu(snapshot: dict[str, int]) -> int:
        total = 0.0
        for key, value in snapshot.items():
            if offloaded and key in ("optimizer", "gradients"):
                continue
            if strategy.offload_param != "none" and key == "parameters":
                continue
            total += value * widen.get(key, 1.0) / divide.get(key, 1)
        return round(total + estimate.buffers)

    return per_gpu


def _reserved(
    estimate: MemoryEstimate, trace: TraceResult, traced_phase: str, peak: int, per_gpu: PerGpu
) -> tuple[int, list[str]]:
    """The sharded step's reserved peak, with the strategy's own reserve the one-stream replay does not see."""
    strategy = estimate.strategy
    reserved, notes = _traced_reserved(trace, peak, per_gpu), []
    if strategy.is_fsdp:  # FSDP's streams and its wrap cache, which a one-stream replay does not see
        reserved = _fsdp_traced_reserved(estimate, trace, traced_phase, peak, per_gpu)
        notes.append("FSDP: its gathered units and reduce copies reserved at their size on its own streams, the "
                     "cache wrapping leaves under the default stream (fsdp_reserve.py, as the analytic path)")
    if strategy.is_deepspeed:  # the trace runs no ZeRO optimizer: its step's own segments, as the analytic path
        from accelwiz.estimate.deepspeed_step import deepspeed_step_segments

        reserved = max(reserved, round(peak + deepspeed_step_segments(estimate.workload, strategy)))
    return reserved, notes


def _traced_states(
    estimate: MemoryEstimate, trace: TraceResult, widen: dict[str, float], divide: dict[str, int]
) -> dict[str, int]:
    """Weights, gradients and optimizer states per GPU from the trace (0 where offloaded to the host)."""
    strategy = estimate.strategy
    offloaded = strategy.offload_optimizer != "none"
    weights = trace.forward_end.bytes["parameters"] * widen["parameters"] / divide["parameters"] + (
        trace.forward_end.bytes["autocast_copies"]
    )
    return {
        "weights": 0 if strategy.offload_param != "none" else round(weights),
        "gradients": 0 if offloaded else round(trace.gradients * widen["gradients"] / divide["gradients"]),
        "optimizer_states": 0
        if offloaded
        else round(trace.optimizer_states * widen["optimizer"] / divide["optimizer"]),
    }


def _replay_ratio(trace: TraceResult, per_gpu: PerGpu) -> tuple[float, int]:
    """The replay's reserve beyond the static bytes (parameters, buffers, optimizer states) per dynamic byte,
    and those static bytes sharded as the strategy shards them (reserved at their size)."""
    snapshot = trace.phase_peaks[trace.peak_phase].bytes
    fixed = {key: snapshot.get(key, 0) for key in ("parameters", "buffers", "optimizer")}
    static = sum(fixed.values())
    static_here = per_gpu(fixed) - per_gpu({})  # per_gpu adds the buffers; take them out again
    if not trace.reserved or trace.peak <= static:
        return 1.0, static_here
    return (trace.reserved - static) / (trace.peak - static), static_here


def _traced_reserved(trace: TraceResult, peak: int, per_gpu: PerGpu) -> int:
    """The replay's ratio applied to the sharded peak beyond its static bytes."""
    if not trace.reserved:
        return peak
    ratio, static_here = _replay_ratio(trace, per_gpu)
    return round(static_here + ratio * (peak - static_here))


def _fsdp_traced_reserved(estimate: MemoryEstimate, trace: TraceResult, traced_phase: str, peak: int,
                          per_gpu: PerGpu) -> int:
    """Under FSDP the traced step's dynamic bytes are the default stream's: FSDP's reserve as the analytic path
    builds it (fsdp_reserve.py), over the traced peak, at the replay's ratio or FSDP's where that is higher."""
    from accelwiz.estimate.fsdp_reserve import fsdp_step_reserve
    from accelwiz.estimate.reserve import fsdp_ratio

    ratio, static_here = _replay_ratio(trace, per_gpu)
    traced_gradients = per_gpu({"gradients": trace.phase_peaks[traced_phase].bytes.get("gradients", 0)}) - per_gpu({})
    fsdp = fsdp_step_reserve(estimate.workload, estimate.strategy, static=static_here, gradients=estimate.gradients,
                             phases=[(peak, traced_gradients)])
    return round(max(peak, static_here + fsdp.pools + fsdp.default_stream(max(ratio, fsdp_ratio(estimate.workload)))))


def render_comparison(comparison: TraceComparison) -> str:
    """A plain table: analytic, traced, difference per category, and where each peak falls."""
    trace = comparison.trace
    lines = [
        f"traced ({trace.model_type}, {trace.layers_traced} of {trace.layers} layers traced, "
        f"{trace.seconds:.1f} s on CPU, fake tensors) vs analytic, GiB per GPU",
        f"  {'':<22}{'analytic':>10}{'traced':>10}{'diff':>8}",
    ]
    for row in ROWS:
        diff = comparison.difference(row)
        lines.append(
            f"  {_LABEL.get(row, row):<22}{comparison.analytic[row] / 2**30:>10.2f}"
            f"{comparison.traced[row] / 2**30:>10.2f}{'' if diff is None else f'{diff:+.1%}':>8}"
        )
    lines.append(
        f"  peak phase: analytic {PHASE_LABEL[comparison.analytic_phase]}, "
        f"traced {PHASE_LABEL[comparison.traced_phase]}"
    )
    lines += [f"  note: {note}" for note in (*trace.notes, *comparison.notes)]
    lines.append("  note: the trace is one process; sharding, buffers and CUDA overhead are applied as the analytic "
                 "model applies them")
    return "\n".join(lines)
