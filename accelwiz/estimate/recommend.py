"""The recommendation: the cheapest way to make the run fit, and the largest micro-batch that fits with it.

It tries, in order of what each costs in speed (`estimate`, `init` and `check`'s advice all call `recommend`):

1. the strategies that keep every parameter on every GPU (DDP, ZeRO-1/2, FSDP shard-grad-op: the communication
   of DDP), fastest first, as asked;
2. the same with gradient checkpointing (one more forward per step, about a third more compute);
3. the same with a smaller micro-batch and as much more accumulation (the global batch is kept; a divisor of
   the micro-batch asked, the largest that fits);
4. then the same three steps with parameters sharded (ZeRO-3, FSDP full shard: gathered every layer), and last
   with offload (the step, or the parameters, over PCIe).

Where the method is full fine-tuning (or LoRA) and nothing fits without sharding, LoRA or QLoRA is named as a
suggestion only: it trains something else, so it is never applied. What the user fixed (`fixed`: an explicit
`--no-gradient-checkpointing`, say) is never changed. "Fits" is the one verdict (estimate/verdict.py) with the
headroom left, GPU memory and host RAM each judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from accelwiz.estimate.gpu_fit import gpu_fit
from accelwiz.estimate.memory import MemoryEstimate, estimate_memory
from accelwiz.estimate.sizes import gib
from accelwiz.estimate.strategy import Strategy, candidate_strategies
from accelwiz.estimate.verdict import MemoryVerdict, judge, memory_verdict
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import HEADROOM

MAX_MICRO_BATCH = 65536
TIER_NAMES = ("replicated", "sharded", "offloaded")
_METHOD_NAME = {"lora": "LoRA", "qlora": "QLoRA"}


def tier_of(strategy: Strategy) -> int:
    """0: parameters on every GPU; 1: parameters sharded; 2: anything offloaded."""
    if strategy.offload_optimizer != "none" or strategy.offload_param != "none":
        return 2
    return 1 if strategy.kind in ("zero3", "fsdp_full", "fsdp_hybrid") else 0


@dataclass(frozen=True)
class Recommendation:
    best: MemoryEstimate | None  # its workload carries the `changes`
    max_micro_batch: int | None
    candidates: tuple[tuple[MemoryEstimate, bool], ...]  # every strategy as asked, fastest first, and whether it fits
    reason: str
    verdicts: tuple[MemoryVerdict, ...] = ()  # the one verdict of each candidate (fits, tight, does not fit)
    changes: tuple[str, ...] = ()  # how best's workload differs from the one asked, cheapest first
    suggestions: tuple[str, ...] = ()  # another method that would fit (never applied)
    accumulation_factor: int = 1  # a smaller micro-batch: accumulation multiplied by this to keep the global batch


@dataclass(frozen=True)
class CompareRow:
    """One strategy of `estimate --compare`: the workload the ladder would run it with (as asked, else with
    checkpointing, else a smaller micro-batch: the recommendation's own steps), its verdict and those changes.
    Iterates as (estimate, verdict)."""

    estimate: MemoryEstimate
    verdict: MemoryVerdict | None
    changes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[MemoryEstimate | MemoryVerdict | None]:
        return iter((self.estimate, self.verdict))


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

    def gpu_need(self, estimate: MemoryEstimate) -> int:
        return gpu_fit(estimate, self.gpu_bytes).need

    def fits_gpu(self, estimate: MemoryEstimate) -> bool:
        return self.verdict(estimate).gpu.verdict == "fits"  # type: ignore[union-attr]

    def fits_host(self, estimate: MemoryEstimate) -> bool:
        return self.host_bytes is None or judge(estimate.host_bytes, self.host_bytes, self.headroom) == "fits"


@dataclass(frozen=True)
class _Found:
    estimate: MemoryEstimate
    changes: tuple[str, ...] = ()
    factor: int = 1


def recommend(
    workload: Workload,
    *,
    gpus_per_node: int,
    nodes: int = 1,
    gpu_memory_bytes: int,
    host_memory_bytes: int | None = None,
    headroom: float = HEADROOM,
    gpu: str | None = None,
    fixed: frozenset[str] = frozenset(),
    strategies: list[Strategy] | None = None,
) -> Recommendation:
    """The cheapest plan that fits (module docstring) on `gpu` (a GPU name, when known), and its largest
    micro-batch. `fixed`: workload fields never changed ("gradient_checkpointing", "micro_batch");
    `strategies`: the ones to choose from (default: every candidate, fastest first)."""
    budget = Budget(gpu_memory_bytes, host_memory_bytes, headroom)
    strategies = strategies if strategies is not None else runnable_strategies(workload, gpus_per_node, nodes)
    asked = {s: estimate_memory(workload, s, gpu) for s in strategies}
    verdicts = tuple(budget.verdict(e) for e in asked.values())
    candidates = tuple((e, v.fits) for e, v in zip(asked.values(), verdicts, strict=True))
    found, suggestions = None, ()
    for tier in sorted({tier_of(s) for s in strategies}):
        group = [s for s in strategies if tier_of(s) == tier]
        found = next(_cheapest(workload, group, asked, budget, gpu, fixed), None)
        if found is not None:
            break
        if tier == 0 and not suggestions:
            suggestions = tuple(_method_suggestions(workload, group, budget, gpu, fixed))
    best = found.estimate if found else None
    max_batch = largest_micro_batch(best.workload, best.strategy, budget, gpu) if best else None
    reason = _reason(candidates, found, budget, suggestions, fixed, gpu)
    return Recommendation(best, max_batch, candidates, reason, verdicts, found.changes if found else (), suggestions,
                          found.factor if found else 1)


def compare_rows(workload: Workload, *, gpus_per_node: int, nodes: int = 1, gpu_memory_bytes: int,
                 host_memory_bytes: int | None = None, headroom: float = HEADROOM, gpu: str | None = None,
                 fixed: frozenset[str] = frozenset(), strategies: list[Strategy] | None = None) -> list[CompareRow]:
    """Every candidate strategy, fastest first, each with the recommendation's ladder applied to it alone: the
    row of the recommended strategy is the recommendation's own estimate (its changes included), and a row that
    fits only with checkpointing or a smaller micro-batch says so; a row nothing makes fit is shown as asked.
    `strategies`: as `recommend`'s."""
    budget = Budget(gpu_memory_bytes, host_memory_bytes, headroom)
    rows = []
    for strategy in strategies if strategies is not None else runnable_strategies(workload, gpus_per_node, nodes):
        asked = estimate_memory(workload, strategy, gpu)
        found = next(_cheapest(workload, [strategy], {strategy: asked}, budget, gpu, fixed), None)
        shown = found.estimate if found else asked
        rows.append(CompareRow(shown, budget.verdict(shown), found.changes if found else ()))
    return rows


def runnable_strategies(workload: Workload, gpus_per_node: int, nodes: int = 1) -> list[Strategy]:
    """The candidate strategies the stack runs this workload under as asked (estimate/refusals.py): never one that
    would be refused if named (a paged or 8-bit optimizer under DeepSpeed's optimizer offload, Liger's fused loss
    under ZeRO-3 with an untied head, a 16-bit loss under autocast). All of them where none is: the refusal of the
    workload itself is said where it is asked."""
    from accelwiz.errors import UsageError
    from accelwiz.estimate.refusals import refuse_unrunnable

    def runs(strategy: Strategy) -> bool:
        try:
            refuse_unrunnable(workload, strategy)
        except UsageError:
            return False
        return True

    candidates = candidate_strategies(gpus_per_node, nodes)
    return [s for s in candidates if runs(s)] or candidates


def _cheapest(workload: Workload, group: list[Strategy], asked: dict[Strategy, MemoryEstimate], budget: Budget,
              gpu: str | None, fixed: frozenset[str]) -> Iterator[_Found]:
    """Within one tier: as asked, then with checkpointing, then with a smaller micro-batch (fastest first)."""
    yield from (_Found(asked[s]) for s in group if budget.fits(asked[s]))
    changes: tuple[str, ...] = ()
    if not workload.gradient_checkpointing and "gradient_checkpointing" not in fixed:
        workload, changes = replace(workload, gradient_checkpointing=True), ("gradient checkpointing on",)
        for strategy in group:
            estimate = estimate_memory(workload, strategy, gpu)
            if budget.fits(estimate):
                yield _Found(estimate, changes)
    if workload.micro_batch == 1 or "micro_batch" in fixed:
        return
    asked_batch = workload.micro_batch
    for smaller in (d for d in range(asked_batch - 1, 0, -1) if asked_batch % d == 0):
        for strategy in group:
            factor = asked_batch // smaller  # the same global batch: accumulation keeps its gradients live
            smaller_batches = replace(workload.with_micro_batch(smaller),
                                      gradient_accumulation=workload.gradient_accumulation * factor)
            estimate = estimate_memory(smaller_batches, strategy, gpu)
            if budget.fits(estimate):
                what = (f"micro-batch {asked_batch} -> {smaller} with gradient accumulation x{factor} "
                        f"(the same global batch)")
                yield _Found(estimate, (*changes, what), factor)


def _method_suggestions(workload: Workload, group: list[Strategy], budget: Budget, gpu: str | None,
                        fixed: frozenset[str]) -> Iterator[str]:
    """LoRA, else QLoRA, where the method asked is heavier and one of them fits without sharding: named, never
    applied (it trains adapters, not the model)."""
    if "method" in fixed:
        return
    lighter = {"full": ("lora", "qlora"), "lora": ("qlora",)}.get(workload.regime, ())
    base = workload if "gradient_checkpointing" in fixed else replace(workload, gradient_checkpointing=True)
    for regime in lighter:
        changed = replace(base, regime=regime)
        for strategy in group:
            estimate = estimate_memory(changed, strategy, gpu)
            if budget.fits(estimate):
                ckpt = " and gradient checkpointing" if base.gradient_checkpointing and not \
                    workload.gradient_checkpointing else ""
                yield (f"{_METHOD_NAME[regime]} would fit without sharding: {strategy.label}{ckpt}, "
                       f"{gib(budget.gpu_need(estimate))} per GPU (--{regime}; it trains adapters, not the model)")
                return


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


def _reason(candidates: tuple[tuple[MemoryEstimate, bool], ...], found: _Found | None, budget: Budget,
            suggestions: tuple[str, ...], budget_fixed: frozenset[str] = frozenset(), gpu: str | None = None) -> str:
    """One line: 'ZeRO-2: 61.2 of 80.0 GiB per GPU; DDP would need 131.0 GiB', the changes named first."""
    capacity = gib(budget.gpu_bytes)
    tail = "".join(f"; or {s}" for s in suggestions)
    if found is None:
        frugal = min((e for e, _ in candidates), key=budget.gpu_need)
        if "gradient_checkpointing" not in budget_fixed and not frugal.workload.gradient_checkpointing:
            # as the ladder tried it: where checkpointing makes the GPU fit, the host is what stops the run
            frugal = estimate_memory(replace(frugal.workload, gradient_checkpointing=True), frugal.strategy, gpu)
        verdict = budget.verdict(frugal)
        if verdict.gpu is not None and verdict.gpu.verdict == "fits":
            return (f"nothing fits host RAM: {frugal.strategy.label} needs {gib(frugal.host_bytes)} of "
                    f"{gib(budget.host_bytes or 0)} per node{tail}")
        words = "is tight at" if verdict.gpu is not None and verdict.gpu.fits else "needs"
        tried = [what for what, fixed in (("gradient checkpointing", "gradient_checkpointing"),
                                          ("smaller micro-batches", "micro_batch")) if fixed not in budget_fixed]
        return (f"nothing fits with {1 - budget.headroom:.0%} to spare: even {frugal.strategy.label} {words} "
                f"{gib(budget.gpu_need(frugal))} of {capacity} per GPU"
                + (f" ({' and '.join(tried)} tried)" if tried else "")
                + (tail or "; shorten the sequences or add GPUs"))
    best = found.estimate
    with_changes = f" with {', '.join(found.changes)}" if found.changes else ""
    line = (f"{best.strategy.label}{with_changes}: {gib(budget.gpu_need(best)).removesuffix(' GiB')} of {capacity} "
            f"per GPU")
    fastest = candidates[0][0]
    if fastest.strategy != best.strategy or found.changes:
        gpu = budget.verdict(fastest).gpu
        if gpu is not None and gpu.verdict == "tight":
            short = f"is tight at {gib(gpu.need)}{' (allocator retries)' if gpu.retries else ''}"
        elif gpu is not None and gpu.verdict == "does not fit":
            short = f"would need {gib(gpu.need)}"
        else:
            short = f"would need {gib(fastest.host_bytes)} of host RAM per node"
        line += f"; {fastest.strategy.label}{' as asked' if found.changes else ''} {short}"
    return line + tail
