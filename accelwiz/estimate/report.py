"""What `accelwiz estimate` shows: the chosen or recommended strategy's estimate, judged against a target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accelwiz.estimate.bf16_master import as_the_run_keeps_masters
from accelwiz.estimate.gpu_fit import gpu_fit
from accelwiz.estimate.memory import MemoryEstimate, estimate_memory
from accelwiz.estimate.recommend import CompareRow, Recommendation, compare_rows, recommend, runnable_strategies
from accelwiz.estimate.strategy import Strategy, candidate_strategies
from accelwiz.estimate.zero_init import as_the_script_loads
from accelwiz.estimate.verdict import MemoryVerdict, memory_verdict
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import HEADROOM


@dataclass(frozen=True)
class Target:
    """What the verdict is against: a GPU memory size, where it came from, and the host's RAM if known."""

    gpu_bytes: int
    description: str
    host_bytes: int | None = None
    gpu_name: str | None = None  # the GPU's name when a profile gives it (the runtime depends on its generation)
    device: Literal["gpu", "cpu"] = "gpu"  # "cpu": a machine without GPUs, judged on host RAM (gpu_bytes 0)

    @property
    def on_cpu(self) -> bool:
        return self.device == "cpu"


@dataclass(frozen=True)
class Report:
    """Everything `accelwiz estimate` prints: the estimate shown, the verdict, the advice, the comparison."""

    shown: MemoryEstimate
    target: Target | None
    verdict: str
    fits: bool | None  # None: nothing to judge against
    advice: Recommendation | None
    rows: list[CompareRow] | None  # --compare: each strategy with the ladder's changes (recommend.compare_rows)
    judged: MemoryVerdict | None = None  # the verdict on GPU memory and on host RAM, each on its own


def build_report(
    workload: Workload,
    target: Target | None,
    strategy: Strategy | None,
    gpus_per_node: int,
    nodes: int,
    *,
    compare: bool,
    fixed: frozenset[str] = frozenset(),
) -> Report:
    """Show the given strategy, else the recommended plan (its changes to the workload named in its reason),
    else (no target) the fastest; judge it. `fixed`: workload fields the recommendation may not change."""
    if target is not None and target.on_cpu:
        return _cpu_report(workload, target, strategy, gpus_per_node, nodes, compare=compare)
    advice = None
    # the strategies offered build the model as the shown run does (--no-zero3-init: under any ZeRO-3)
    offered = as_the_run_keeps_masters(as_the_script_loads(runnable_strategies(workload, gpus_per_node, nodes),
                                                           strategy), strategy, workload)
    if target is not None:
        advice = recommend(
            workload,
            gpus_per_node=gpus_per_node,
            nodes=nodes,
            gpu_memory_bytes=target.gpu_bytes,
            host_memory_bytes=target.host_bytes,
            headroom=HEADROOM,
            gpu=target.gpu_name,
            fixed=fixed,
            strategies=offered,
        )
    gpu, capacity = (None, None) if target is None else (target.gpu_name, target.gpu_bytes or None)
    if strategy is not None:
        shown = estimate_memory(workload, strategy, gpu, capacity)
    elif advice is not None:  # nothing fits: show the most frugal candidate
        shown = advice.best or min((e for e, _ in advice.candidates),
                                   key=lambda e: gpu_fit(e, target.gpu_bytes).need)  # type: ignore[union-attr]
    else:
        shown = estimate_memory(workload, candidate_strategies(gpus_per_node, nodes)[0], gpu, capacity)
    rows: list[CompareRow] | None = None
    if compare and target is not None:  # each strategy as the recommendation's ladder would run it
        rows = compare_rows(workload, gpus_per_node=gpus_per_node, nodes=nodes, gpu_memory_bytes=target.gpu_bytes,
                            host_memory_bytes=target.host_bytes, headroom=HEADROOM, gpu=gpu, fixed=fixed,
                            strategies=offered)
    elif compare:  # nothing to judge against: as asked
        rows = [CompareRow(estimate_memory(workload, s, gpu), None)
                for s in as_the_run_keeps_masters(as_the_script_loads(candidate_strategies(gpus_per_node, nodes),
                                                                       strategy), strategy, workload)]
    judged = None if target is None else memory_verdict(shown, target.gpu_bytes, target.host_bytes, HEADROOM)
    fits = None if judged is None else judged.runs  # tight runs (exit 0, with the warning in the verdict)
    return Report(shown, target, verdict(shown, target, HEADROOM), fits, advice, rows, judged)


def _cpu_report(workload: Workload, target: Target, strategy: Strategy | None, processes: int, nodes: int, *,
                compare: bool) -> Report:
    """A machine without GPUs: the run's processes train on its CPU, judged on its RAM (estimate/cpu.py)."""
    from accelwiz.errors import UsageError
    from accelwiz.estimate.cpu import cpu_estimate, cpu_advice, processes_strategy

    if compare:
        raise UsageError(f"--compare and --plot set GPU strategies side by side; {target.description} has no GPU",
                         hint="drop --compare/--plot, or pass --system PRESET|profile.json for a GPU machine")
    shown = cpu_estimate(workload, strategy or processes_strategy(processes, nodes))
    judged = memory_verdict(shown, None, target.host_bytes, HEADROOM)
    return Report(shown, target, verdict(shown, target, HEADROOM), judged.runs if judged.verdict else None,
                  cpu_advice(shown, target.host_bytes), None, judged)


def verdict(estimate: MemoryEstimate, target: Target | None, headroom: float) -> str:
    """The one verdict (estimate/verdict.py) as `estimate` prints it: fits, tight or does not fit."""
    if target is None:
        return (
            "no verdict: no GPU found and no target given (pass --gpu-memory 80GiB or --system PRESET|FILE; "
            "--system local judges a CPU run on this machine's RAM)"
        )
    gpu_bytes = None if target.on_cpu else target.gpu_bytes
    return memory_verdict(estimate, gpu_bytes, target.host_bytes, headroom).describe(target.description)
