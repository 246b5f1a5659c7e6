"""The fastest strategy that fits, and the largest micro-batch that fits with it.

Strategies are tried in `strategy.candidate_strategies` order (fastest first; the ranking and its reasons are
in accelwiz/estimate/strategy.py). "Fits" means the per-GPU total stays within `headroom` of the GPU's memory
(the remaining 10% by default absorbs what no formula sees: fragmentation spikes, kernels' workspaces,
dataloader pinned memory) and, when the host's RAM is known, the per-node host estimate stays within it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.estimate.memory import MemoryEstimate, estimate_memory
from accelwiz.estimate.sizes import gib
from accelwiz.estimate.strategy import Strategy, candidate_strategies
from accelwiz.estimate.verdict import MemoryVerdict, judge, memory_verdict
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import HEADROOM

MAX_MICRO_BATCH = 65536


@dataclass(frozen=True)
class Recommendation:
    best: MemoryEstimate | None
    max_micro_batch: int | None
    candidates: tuple[tuple[MemoryEstimate, bool], ...]  # every strategy, fastest first, and whether it fits
    reason: str
    verdicts: tuple[MemoryVerdict, ...] = ()  # the one verdict of each candidate (fits, tight, does not fit)


@dataclass(frozen=True)
class Budget:
    gpu_bytes: int
    host_bytes: int | None = None
    headroom: float = HEADROOM

    def verdict(self, estimate: MemoryEstimate) -> MemoryVerdict:
        """The one verdict (estimate/verdict.py): GPU memory and host RAM judged separately."""
        return memory_verdict(estimate, self.gpu_bytes, self.host_bytes, self.headroom)

    def fits(self, estimate: MemoryEstimate) -> bool:
        return self.verdict(estimate).fits

    def fits_gpu(self, estimate: MemoryEstimate) -> bool:
        return judge(estimate.per_gpu_total, self.gpu_bytes, self.headroom) == "fits"

    def fits_host(self, estimate: MemoryEstimate) -> bool:
        return self.host_bytes is None or judge(estimate.host_bytes, self.host_bytes, self.headroom) == "fits"


def recommend(
    workload: Workload,
    *,
    gpus_per_node: int,
    nodes: int = 1,
    gpu_memory_bytes: int,
    host_memory_bytes: int | None = None,
    headroom: float = HEADROOM,
    gpu: str | None = None,
) -> Recommendation:
    """Estimate every candidate strategy (on `gpu`, a GPU name, when known), pick the fastest that fits, and
    find its largest micro-batch."""
    budget = Budget(gpu_memory_bytes, host_memory_bytes, headroom)
    estimates = [estimate_memory(workload, s, gpu) for s in candidate_strategies(gpus_per_node, nodes)]
    verdicts = tuple(budget.verdict(e) for e in estimates)
    candidates = tuple((e, v.fits) for e, v in zip(estimates, verdicts, strict=True))
    best = next((e for e, fits in candidates if fits), None)
    max_batch = largest_micro_batch(workload, best.strategy, budget, gpu) if best else None
    return Recommendation(best, max_batch, candidates, _reason(candidates, best, budget), verdicts)


def largest_micro_batch(workload: Workload, strategy: Strategy, budget: Budget, gpu: str | None = None) -> int | None:
    """The largest micro-batch that fits (memory grows with it: exponential, then binary search)."""

    def fits(batch: int) -> bool:
        return budget.fits(estimate_memory(workload.with_micro_batch(batch), strategy, gpu))

    if not fits(1):
        return None
    low, high = 1, 2
    while high <= MAX_MICRO_BATCH and fits(high):
        low, high = high, high * 2
    high = min(high, MAX_MICRO_BATCH + 1)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _reason(
    candidates: tuple[tuple[MemoryEstimate, bool], ...], best: MemoryEstimate | None, budget: Budget
) -> str:
    """One line: 'ZeRO-2: 61.2 of 80.0 GiB per GPU; DDP would need 131.0 GiB'."""
    capacity = gib(budget.gpu_bytes)
    if best is None:
        frugal = min((e for e, _ in candidates), key=lambda e: e.per_gpu_total)
        if budget.fits_gpu(frugal):
            return (
                f"nothing fits host RAM: {frugal.strategy.label} needs {gib(frugal.host_bytes)} of "
                f"{gib(budget.host_bytes or 0)} per node"
            )
        return (
            f"nothing fits: even {frugal.strategy.label} needs {gib(frugal.per_gpu_total)} of {capacity} per "
            f"GPU; lower the micro-batch or sequence length, or turn on gradient checkpointing"
        )
    line = f"{best.strategy.label}: {gib(best.per_gpu_total).removesuffix(' GiB')} of {capacity} per GPU"
    fastest = candidates[0][0]
    if fastest is not best:
        need = (
            gib(fastest.per_gpu_total)
            if not budget.fits_gpu(fastest)
            else f"{gib(fastest.host_bytes)} of host RAM per node"
        )
        line += f"; {fastest.strategy.label} would need {need}"
    return line
