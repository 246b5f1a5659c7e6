"""A plan for a machine without GPUs, judged on host RAM as `estimate` judges it (estimate/cpu.py: the run's
processes, every tensor in host RAM, the one verdict), and the changes of answers that make it fit.

The changes follow `estimate`'s own CPU recommendation (estimate/cpu.py `cpu_advice`), in its order: gradient
checkpointing, micro-batch 1, one process, LoRA; each alone first (what `estimate --config` of the plan names),
then together. QLoRA is not on the ladder: bitsandbytes' 4-bit layers need a GPU. costing.plan_for stays the GPU
plan (strategies, offload); this module is its counterpart where there is no strategy to choose.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB, HEADROOM
from accelwiz.wizard.answers import Regime
from accelwiz.wizard.post_settings import regimes_for, training_kind


@dataclass(frozen=True)
class CpuCost:
    """The run's host RAM per machine and the one verdict on it (None where this machine's RAM is unknown)."""

    estimate: Any  # CpuMemoryEstimate, or a DPO/GRPO run's combined estimate
    verdict: Any  # accelwiz.estimate.verdict.MemoryVerdict
    processes: int

    @property
    def host_bytes(self) -> int:
        return int(self.estimate.host_bytes)

    @property
    def runs(self) -> bool:
        return self.verdict.runs

    @property
    def fits(self) -> bool:
        return self.verdict.fits

    def describe(self) -> str:
        """'fits: host RAM 21.1 GiB of 23.5 GiB per machine (90%)', as `estimate` prints it."""
        if self.verdict.verdict is None:
            return f"host RAM {self.host_bytes / GIB:.1f} GiB per machine, no verdict (this machine's RAM is unknown)"
        return self.verdict.describe()

    @property
    def where(self) -> str:
        """'1 CPU process(es) per machine': a fallback's title (its reason gives the RAM)."""
        return f"{self.processes} CPU process(es) per machine"


def cpu_cost(answers: Mapping[str, Any], system: MachineProfile) -> CpuCost | None:
    """The answers' run on this machine's CPUs, judged on its RAM; None with GPUs (costing.plan_for's) or no
    model. DPO/GRPO: the policy's step with its reference model or generation, as `estimate --kind` costs them."""
    if system.gpus or not answers.get("model"):
        return None
    from accelwiz.estimate.cpu import cpu_estimate, processes_strategy
    from accelwiz.estimate.verdict import memory_verdict
    from accelwiz.wizard.costing import workload_for

    processes = int(answers.get("processes") or 1)
    strategy = processes_strategy(processes, int(answers.get("num_machines") or 1))
    try:
        workload = workload_for(answers, system)
    except (ValueError, TypeError):  # an answer given ahead of its question: verified there
        return None
    if training_kind(answers).post:  # every phase's tensors in host RAM, as check and run judge them (memory_view)
        from accelwiz.estimate.cpu import as_cpu_run, cpu_strategy
        from accelwiz.estimate.posttraining import estimate_posttraining
        from accelwiz.wizard.post_settings import post_settings

        post = post_settings(answers, workload.model.max_position_embeddings)
        shown = as_cpu_run(estimate_posttraining(workload, cpu_strategy(strategy), post, None).combined)
    else:
        shown = cpu_estimate(workload, strategy)
    return CpuCost(shown, memory_verdict(shown, None, system.host.memory_total_bytes or None, HEADROOM), processes)


@dataclass(frozen=True)
class CpuFit:
    """A change of answers (empty: as asked) and what the run then costs."""

    names: tuple[str, ...]  # 'gradient checkpointing', 'LoRA', ...
    changes: dict[str, Any]
    cost: CpuCost

    @property
    def words(self) -> str:
        return " + ".join(self.names)


def ladder(answers: Mapping[str, Any], fixed: frozenset[str] = frozenset()) -> list[tuple[str, dict[str, Any]]]:
    """`estimate`'s CPU changes that apply to these answers (cpu_advice's order), leaving out answers given."""
    steps: list[tuple[str, dict[str, Any]]] = []
    if not answers.get("gradient_checkpointing") and "gradient_checkpointing" not in fixed:
        steps.append(("gradient checkpointing", {"gradient_checkpointing": True}))
    if int(answers.get("micro_batch") or 1) > 1 and "micro_batch" not in fixed:
        steps.append(("micro-batch 1 (more accumulation)", {"micro_batch": 1}))
    if int(answers.get("processes") or 1) > 1 and "processes" not in fixed:
        steps.append(("one process", {"processes": 1}))
    regime = Regime(getattr(answers.get("regime"), "value", answers.get("regime")) or "full")
    if regime is Regime.full and "regime" not in fixed and Regime.lora in regimes_for(answers):
        steps.append(("LoRA", {"regime": Regime.lora}))
    return steps


def first_fit(answers: Mapping[str, Any], system: MachineProfile,
              fixed: frozenset[str] = frozenset()) -> CpuFit | None:
    """The answers as they are when they fit; else the first ladder step that fits alone, else the first
    accumulation of steps (checkpointing, then + micro-batch 1, ...) that does; None when nothing does."""
    cost = cpu_cost(answers, system)
    if cost is None or cost.fits:
        return CpuFit((), {}, cost) if cost is not None else None
    steps = ladder(answers, fixed)
    tries = [((name,), changes) for name, changes in steps]
    for count in range(2, len(steps) + 1):
        tries.append((tuple(n for n, _ in steps[:count]), {k: v for _, c in steps[:count] for k, v in c.items()}))
    for names, changes in tries:
        changed = cpu_cost({**answers, **changes}, system)
        if changed is not None and changed.fits:
            return CpuFit(names, changes, changed)
    return None


def lightest(answers: Mapping[str, Any], system: MachineProfile, fixed: frozenset[str] = frozenset()) -> CpuFit:
    """Every ladder step at once: the least this machine's CPUs can train the model with."""
    steps = ladder(answers, fixed)
    changes = {k: v for _, c in steps for k, v in c.items()}
    cost = cpu_cost({**answers, **changes}, system)
    assert cost is not None
    return CpuFit(tuple(n for n, _ in steps), changes, cost)


def nothing_fits(answers: Mapping[str, Any], system: MachineProfile, fixed: frozenset[str]) -> str:
    """One line: the plan as asked, that not even every change of the ladder fits, and the RAM that would."""
    cost = cpu_cost(answers, system)
    assert cost is not None
    least = lightest(answers, system, fixed)
    tried = f"; not even with {least.words}: {least.cost.host_bytes / GIB:.1f} GiB" if least.names else ""
    need = math.ceil(least.cost.host_bytes / HEADROOM / GIB * 10) / 10  # rounded up: that RAM does hold it
    return (f"nothing fits this machine's RAM: CPU, {cost.processes} process(es) per machine: {cost.describe()}"
            f"{tried}; what would: a machine with {need:.1f} GiB of RAM or more ({HEADROOM:.0%} of it for "
            "the run), or a GPU machine (QLoRA needs a GPU)")


def choice_words(answers: Mapping[str, Any], system: MachineProfile, fixed: frozenset[str] = frozenset()) -> str:
    """A menu's words for a kind or a method on this machine: ': full fine-tuning with gradient checkpointing,
    21.1 of 23.5 GiB host RAM' or ': does not fit (24.0 GiB of 8.0 GiB host RAM)'."""
    fit = first_fit(answers, system, fixed)
    ram = (system.host.memory_total_bytes or 0) / GIB
    if fit is None:
        cost = cpu_cost(answers, system)
        return f": does not fit ({cost.host_bytes / GIB:.1f} GiB of {ram:.1f} GiB host RAM)" if cost else ""
    regime = Regime(getattr(fit.changes.get("regime", answers.get("regime")), "value",
                            fit.changes.get("regime", answers.get("regime"))) or "full")
    from accelwiz.wizard.costing import REGIME_NAME

    also = [n for n in fit.names if n != "LoRA"]
    return (f": {REGIME_NAME[regime]}{' with ' + ', '.join(also) if also else ''}, "
            f"{fit.cost.host_bytes / GIB:.1f} of {ram:.1f} GiB host RAM")


def default_regime(answers: Mapping[str, Any], system: MachineProfile) -> Regime:
    """Full fine-tuning unless the ladder reaches LoRA before anything fits (checkpointing comes first)."""
    fit = first_fit({**answers, "regime": Regime.full}, system)
    return Regime.lora if fit is not None and "regime" in fit.changes else Regime.full


def explain_default(answers: Mapping[str, Any], system: MachineProfile) -> str:
    """Why the default method on this machine is LoRA, in one line (the ladder's full-fine-tuning steps failed)."""
    full = {**answers, "regime": Regime.full}
    least = lightest(full, system, frozenset({"regime"}))
    picked = first_fit(full, system)
    assert picked is not None
    with_ = f" even with {least.words}" if least.names else ""
    ram = (system.host.memory_total_bytes or 0) / GIB
    return (f"default LoRA ({picked.cost.processes} CPU process(es), {picked.cost.host_bytes / GIB:.1f} GiB host "
            f"RAM per machine): full fine-tuning needs {least.cost.host_bytes / GIB:.1f} GiB{with_}, over "
            f"{HEADROOM:.0%} of this machine's {ram:.1f} GiB")
