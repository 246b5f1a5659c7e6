"""The memory plan behind the strategy question: the estimator's recommendation for the answers so far."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard.answers import Precision, Regime, Strategy

# The estimator's strategy kinds that the wizard offers, and what it calls them.
KIND_TO_STRATEGY = {
    "single": Strategy.single,
    "ddp": Strategy.ddp,
    "fsdp_full": Strategy.fsdp,
    "zero1": Strategy.zero1,
    "zero2": Strategy.zero2,
    "zero3": Strategy.zero3,
}


@dataclass(frozen=True)
class Option:
    """One strategy the estimator costed: how much memory per GPU, and whether it fits."""

    strategy: Strategy
    offload_optimizer: bool
    offload_params: bool
    per_gpu_bytes: int
    fits: bool
    label: str


@dataclass(frozen=True)
class Plan:
    best: Option | None
    options: tuple[Option, ...]
    reason: str
    gpu_memory_bytes: int
    reason_is_for_best: bool = True  # False when the estimator's pick is a kind the wizard does not write

    def option(self, strategy: Strategy) -> Option | None:
        """The fastest costed option of a strategy that fits (no offload before offload), else its first."""
        same = [o for o in self.options if o.strategy is strategy]
        return next((o for o in same if o.fits), same[0] if same else None)

    def explain(self) -> str:
        """'ZeRO-2: 61.0 of 80.0 GiB per GPU; DDP would need 131.0 GiB', or the estimator's reason."""
        if self.best is None or self.reason_is_for_best:
            return self.reason
        total = self.gpu_memory_bytes / GIB
        text = f"{self.best.label}: {self.best.per_gpu_bytes / GIB:.1f} of {total:.1f} GiB per GPU"
        faster = [o for o in self.options if not o.fits and o.strategy in (Strategy.single, Strategy.ddp)]
        if faster:
            text += f"; {faster[0].label} would need {faster[0].per_gpu_bytes / GIB:.1f} GiB"
        return text


def workload_for(answers: Mapping[str, Any], system: MachineProfile) -> Any:
    """The estimator's Workload for the answers so far (precision: the hardware default until asked)."""
    from accelwiz.estimate.models import resolve_model
    from accelwiz.estimate.workload import Workload
    from accelwiz.wizard.suggest import default_precision

    precision = answers.get("precision") or default_precision(answers, system)
    regime = answers.get("regime") or Regime.full
    return Workload(
        model=resolve_model(answers["model"]),
        micro_batch=int(answers.get("micro_batch") or 1),
        seq_len=int(answers.get("seq_len") or 2048),
        regime=regime.value,
        lora_rank=int(answers.get("lora_rank") or 16),
        precision=_estimator_precision(precision),
        gradient_checkpointing=bool(answers.get("gradient_checkpointing")),
    )


def _estimator_precision(precision: Precision) -> str:
    """accelerate's mixed precision keeps fp32 master weights, which the estimator calls "mixed"."""
    return "fp32" if precision is Precision.no else "mixed"


# The answers the estimate depends on; the plan is cached on them, so asking for defaults, choices and the
# explanation of one question costs one estimate.
PLAN_INPUTS = (
    "model",
    "regime",
    "lora_rank",
    "seq_len",
    "micro_batch",
    "gradient_checkpointing",
    "gpus",
    "num_machines",
)


def plan_for(answers: Mapping[str, Any], system: MachineProfile) -> Plan | None:
    """The recommendation for a named model on this machine, or None without a model or GPUs."""
    if not answers.get("model") or not system.gpus:
        return None
    inputs = tuple((key, answers.get(key)) for key in PLAN_INPUTS)
    cached = _PLANS.get((id(system), inputs))
    if cached is None or cached[0] is not system:
        cached = _PLANS[(id(system), inputs)] = (system, _estimate_plan(dict(inputs), system))
    return cached[1]


# MachineProfile holds lists, so it is not hashable: cache by identity and keep the profile alive beside it.
_PLANS: dict[tuple[int, tuple[tuple[str, Any], ...]], tuple[MachineProfile, Plan]] = {}


def _estimate_plan(answers: dict[str, Any], system: MachineProfile) -> Plan:
    from accelwiz.estimate.recommend import recommend

    memory = system.min_gpu_memory_bytes or 0
    rec = recommend(
        workload_for(answers, system),
        gpus_per_node=int(answers.get("gpus") or system.gpu_count),
        nodes=int(answers.get("num_machines") or 1),
        gpu_memory_bytes=memory,
        host_memory_bytes=system.host.memory_total_bytes,
    )
    options = tuple(
        _option(estimate, fits) for estimate, fits in rec.candidates if _offered(estimate.strategy)
    )
    picked = rec.best is not None and _offered(rec.best.strategy)
    # When the estimator's pick is a kind the wizard does not write: the fastest offered one that fits.
    best = _option(rec.best, True) if picked else next((o for o in options if o.fits), None)
    return Plan(
        best=best,
        options=options,
        reason=rec.reason,
        gpu_memory_bytes=memory,
        reason_is_for_best=picked or rec.best is None,
    )


def _offered(strategy: Any) -> bool:
    """The wizard writes FSDP full shard, DDP and ZeRO 1-3 with CPU offload; NVMe offload needs a path and a
    disk check, so it is left to a hand-edited JSON."""
    return strategy.kind in KIND_TO_STRATEGY and "nvme" not in (
        strategy.offload_optimizer,
        strategy.offload_param,
    )


def _option(estimate: Any, fits: bool) -> Option:
    strategy = estimate.strategy
    return Option(
        strategy=KIND_TO_STRATEGY[strategy.kind],
        offload_optimizer=strategy.offload_optimizer != "none",
        offload_params=strategy.offload_param != "none",
        per_gpu_bytes=int(estimate.per_gpu_total),
        fits=bool(fits),
        label=strategy.label,
    )
