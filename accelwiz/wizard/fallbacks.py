"""When the chosen fine-tuning does not fit: the changes of answers that make it fit, fastest first, each with the
one line that says why, and, when none does, what would (more machines, larger GPUs).

Reads the costed plan (costing.py) only: session.py offers these on the review screen and applies the first
with --defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard.answers import Regime
from accelwiz.wizard.costing import REGIME_NAME, Option, Plan, plan_for, short_of
from accelwiz.wizard.post_settings import regimes_for, training_kind

# Shorter sequences the fallback tries, longest first (halving the default 2048 down to 512).
SHORTER_SEQUENCES = (1024, 512)


@dataclass(frozen=True)
class Fallback:
    """A change of answers that makes the plan fit, and the one line that says why it was chosen."""

    changes: dict[str, Any]
    option: Option | None  # None on a machine without GPUs: `where` says what the run then holds
    reason: str
    asks: tuple[str, ...] = field(default=())  # questions the change brings that have no default (nvme_path)
    where: str = ""

    @property
    def title(self) -> str:
        what = ", ".join(f"{k}: {_value(v) if not isinstance(v, bool) else str(v).lower()}"
                         for k, v in self.changes.items())
        if self.option is None:
            return f"{what} ({self.where})"
        return f"{what} ({self.option.label}, {self.option.per_gpu_bytes / GIB:.1f} GiB per GPU)"


def fallbacks(answers: Mapping[str, Any], system: MachineProfile, *, fixed: frozenset[str] = frozenset(),
              nvme: bool = True) -> list[Fallback]:
    """What fits, in order of speed: the chosen fine-tuning with CPU offload, then with NVMe offload, LoRA,
    QLoRA, a shorter sequence, more GPUs of this machine. `fixed` are answers the user gave explicitly (never
    changed); `nvme` False leaves NVMe out (no path can be asked). Without GPUs: `cpu_fallback`."""
    if not system.gpus:
        return cpu_fallback(answers, system, fixed=fixed)
    plan = plan_for(answers, system)
    if plan is None:
        return []
    current = plan.chosen(answers)
    shortage = f"{current.label} needs {short_of(current)}" if current is not None and not current.fits else \
        "the chosen strategy was not costed"
    search = _Search(answers, system, fixed, shortage)
    found = _offload(plan, search, nvme=nvme) if search.strategy_free else []
    for change in (_lighter_regime(search), _shorter(search), _more_gpus(search)):
        if change is not None:
            found.append(change)
    return found


@dataclass(frozen=True)
class _Search:
    """The answers a fallback changes, what the user fixed, and why the plan does not fit as it is."""

    answers: Mapping[str, Any]
    system: MachineProfile
    fixed: frozenset[str]
    shortage: str

    @property
    def strategy_free(self) -> bool:
        return not self.fixed & {"strategy", "offload_optimizer", "offload_params", "offload_device"}

    @property
    def regime(self) -> Regime:
        return Regime(_value(self.answers.get("regime")) or "full")

    @property
    def lightest(self) -> Regime:
        """The lightest fine-tuning a shorter sequence is tried with: the kind's last one, unless fixed."""
        return regimes_for(self.answers)[-1] if "regime" not in self.fixed else self.regime

    def fit(self, changes: dict[str, Any]) -> tuple[dict[str, Any], Option] | None:
        """The option that fits with `changes`: the fastest one, or the fixed strategy's own."""
        changed = plan_for({**self.answers, **changes}, self.system)
        if changed is None:
            return None
        if self.strategy_free:
            best = changed.best_option(nvme=False)
            return ({**changes, **best.answers()}, best) if best is not None else None
        same = changed.chosen(self.answers)
        return (changes, same) if same is not None and same.fits else None

    def first_fit(self, tries: Iterable[tuple[dict[str, Any], Callable[[Option], str]]]) -> Fallback | None:
        """The first change that fits, with its reason (which names the option it fits with)."""
        for changes, reason in tries:
            found = self.fit(changes)
            if found is not None:
                return Fallback(found[0], found[1], reason(found[1]))
        return None


def _offload(plan: Plan, search: _Search, *, nvme: bool) -> list[Fallback]:
    """The fastest strategy with CPU offload that fits; else, where allowed, the one with NVMe offload."""
    found: list[Fallback] = []
    cpu = plan.best_option(nvme=False)
    if cpu is not None:
        found.append(Fallback(cpu.answers(), cpu, f"{cpu.label} fits where {search.shortage}"))
    disk = next((o for o in plan.fitting() if o.nvme), None)
    if nvme and disk is not None and cpu is None:
        cpu_offload = min((o for o in plan.options if o.offload_device == "cpu"),
                          key=lambda o: (o.per_gpu_bytes, o.host_bytes), default=None)
        why = f"CPU offload needs {short_of(cpu_offload)}" if cpu_offload else search.shortage
        found.append(Fallback(disk.answers(), disk, f"{disk.label} fits where {why}",
                              asks=() if search.answers.get("nvme_path") else ("nvme_path",)))
    return found


def _lighter_regime(search: _Search) -> Fallback | None:
    """LoRA, else QLoRA (where the kind offers it), when lighter than the chosen fine-tuning."""
    if "regime" in search.fixed:
        return None
    regime, order = search.regime, list(Regime)
    lighter = [r for r in (Regime.lora, Regime.qlora) if order.index(r) > order.index(regime)
               and r in regimes_for(search.answers)]
    return search.first_fit(({"regime": r}, lambda o, r=r: f"{REGIME_NAME[r]} fits ({o.label}) where "
                                                           f"{REGIME_NAME[regime]} does not: {search.shortage}")
                            for r in lighter)


def _shorter(search: _Search) -> Fallback | None:
    """A shorter sequence (DPO/GRPO: a shorter completion, the part that can be shortened), with the lightest
    fine-tuning."""
    answers = search.answers
    lighter = {"regime": search.lightest} if search.lightest is not search.regime else {}
    if training_kind(answers).post and "max_completion_length" not in search.fixed:
        completion = int(answers.get("max_completion_length") or 512)
        return search.first_fit(
            ({"max_completion_length": n, **lighter},
             lambda o, n=n: f"completion {n} fits ({o.label}) where {completion} does not: {search.shortage}")
            for n in (completion // 2, completion // 4) if n >= 16)
    if "seq_len" in search.fixed:
        return None
    given = answers.get("seq_len") or 2048
    return search.first_fit(
        ({"seq_len": seq, **lighter},
         lambda o, seq=seq: f"sequence {seq} fits ({o.label}) where {given} does not: {search.shortage}")
        for seq in SHORTER_SEQUENCES if seq < int(given))


def _more_gpus(search: _Search) -> Fallback | None:
    """Every GPU of this machine, when fewer were asked for."""
    system = search.system
    gpus = int(search.answers.get("gpus") or system.gpu_count)
    if "gpus" in search.fixed or gpus >= system.gpu_count:
        return None
    return search.first_fit([({"gpus": system.gpu_count},
                              lambda o: f"{system.gpu_count} GPUs fit ({o.label}) where {gpus} do not")])


def cpu_fallback(answers: Mapping[str, Any], system: MachineProfile, *,
                 fixed: frozenset[str] = frozenset()) -> list[Fallback]:
    """A machine without GPUs: the first change of `estimate`'s CPU ladder that fits its RAM (cpu_plan.py)."""
    from accelwiz.wizard.cpu_plan import cpu_cost, first_fit

    fit = first_fit(answers, system, fixed)
    asked = cpu_cost(answers, system)
    if fit is None or not fit.changes or asked is None:
        return []
    return [Fallback(fit.changes, None, f"with {fit.words}, {fit.cost.describe()}; as asked, {asked.describe()}",
                     where=fit.cost.where)]


def what_would_fit(answers: Mapping[str, Any], system: MachineProfile, *,
                   fixed: frozenset[str] = frozenset()) -> str:
    """For 'nothing fits': the fewest machines of this kind with which QLoRA (or the regime given) fits with the
    fastest strategy, else the GPU memory one GPU would need."""
    regime = Regime(_value(answers.get("regime")) or "full")
    lightest = {**answers, "regime": regime if "regime" in fixed else regimes_for(answers)[-1]}
    gpus = int(answers.get("gpus") or system.gpu_count)
    current = int(answers.get("num_machines") or 1)
    for machines in (current, *(n for n in (2, 4, 8, 16, 32, 64) if n > current)):
        plan = plan_for({**lightest, "num_machines": machines, "gpus": gpus}, system)
        best = plan.best_option(nvme=False) if plan else None
        if best is not None:
            where = "these machines" if machines == current else f"{machines} machines of {gpus} GPU(s)"
            return (f"{where} with {REGIME_NAME[Regime(_value(lightest['regime']))]} and {best.label} "
                    f"({best.per_gpu_bytes / GIB:.1f} GiB per GPU)")
    plan = plan_for(lightest, system)
    on_gpu = [o for o in plan.options if o.offload_device == "none"] if plan else []
    if not on_gpu:
        return "a larger machine"
    least = min(on_gpu, key=lambda o: o.per_gpu_bytes)
    return (f"GPUs with {least.per_gpu_bytes / GIB / 0.9:.0f} GiB or more ({_value(lightest['regime'])}, "
            f"{least.label} without offload)")


def _value(value: Any) -> Any:
    return getattr(value, "value", value)
