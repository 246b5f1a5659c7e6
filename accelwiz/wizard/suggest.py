"""Computed defaults, choices and explanations: what the catalog asks the machine and the answers so far."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Launcher, Precision, Regime, Strategy
from accelwiz.wizard.build import FP8_BACKENDS
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.plan import GIB, plan_for
from accelwiz.wizard.predicates import uses_deepspeed


def world_size(answers: Mapping[str, Any], system: MachineProfile) -> int:
    gpus = answers.get("gpus", system.gpu_count)
    return max(int(gpus or 0), 1) * int(answers.get("num_machines") or 1)


def default_gpus(answers: Mapping[str, Any], system: MachineProfile) -> int:
    return system.gpu_count


def default_machines(answers: Mapping[str, Any], system: MachineProfile) -> int:
    return system.num_machines


def verify_model(name: str) -> None:
    """An unknown model name fails at the question, with the estimator's suggestions, not at the end."""
    if name:
        from accelwiz.estimate.models import resolve_model

        resolve_model(name)


def regime_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("Full fine-tuning (every weight trains)", Regime.full),
        Choice("LoRA (small adapters on a frozen model)", Regime.lora),
        Choice("QLoRA (LoRA on a 4-bit quantized model)", Regime.qlora),
    ]


def strategy_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    """One GPU: no replication to choose, only offload (ZeRO-2/3); several: every strategy."""
    if world_size(answers, system) == 1:
        offered = [Strategy.single, Strategy.zero2, Strategy.zero3]
    else:
        offered = [Strategy.ddp, Strategy.fsdp, Strategy.zero1, Strategy.zero2, Strategy.zero3]
    plan = plan_for(answers, system)
    missing_deepspeed = "deepspeed" in system.packages and system.packages["deepspeed"] is None
    choices = []
    for strategy in offered:
        label = strategy.label
        option = plan.option(strategy) if plan else None
        if option is not None:
            verdict = "fits" if option.fits else "does not fit"
            offload = " with offload" if option.offload_optimizer or option.offload_params else ""
            label += f": {option.per_gpu_bytes / GIB:.1f} GiB per GPU{offload}, {verdict}"
        if strategy.zero_stage is not None and missing_deepspeed:
            label += " [DeepSpeed is not installed]"
        choices.append(Choice(label, strategy))
    return choices


def default_strategy(answers: Mapping[str, Any], system: MachineProfile) -> Strategy:
    """The estimator's fastest fitting strategy; without an estimate, plain data parallelism."""
    plan = plan_for(answers, system)
    if plan is not None:
        return plan.best.strategy if plan.best is not None else Strategy.zero3
    return Strategy.single if world_size(answers, system) == 1 else Strategy.ddp


def explain_strategy(answers: Mapping[str, Any], system: MachineProfile) -> str:
    plan = plan_for(answers, system)
    if plan is None:
        return "no model named, so no memory estimate: DDP is the fastest when the model fits on one GPU"
    return plan.explain()


def _needs_offload(answers: Mapping[str, Any], system: MachineProfile, *, params: bool) -> bool:
    plan = plan_for(answers, system)
    strategy = answers.get("strategy")
    if plan is None or not isinstance(strategy, Strategy):
        return False
    if plan.best is None:  # nothing fits: start from the most frugal setting, offloading all it can
        return strategy is Strategy.zero3 or (params and strategy is Strategy.fsdp)
    if plan.best is not None and plan.best.strategy is strategy:
        return plan.best.offload_params if params else plan.best.offload_optimizer
    fitting = [o for o in plan.options if o.strategy is strategy and o.fits]
    if any(not o.offload_optimizer and not o.offload_params for o in fitting):
        return False
    return bool(fitting) and (fitting[0].offload_params if params else fitting[0].offload_optimizer)


def default_offload_optimizer(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return _needs_offload(answers, system, params=False)


def default_offload_params(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return _needs_offload(answers, system, params=True)


def default_precision(answers: Mapping[str, Any], system: MachineProfile) -> Precision:
    """bf16 where the GPU computes it natively (Ampere+), fp16 on Volta/Turing, full precision on the CPU."""
    if not system.gpus:
        return Precision.no
    return Precision.bf16 if system.native_bf16 else Precision.fp16


def precision_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    bf16 = "bf16" if system.native_bf16 else "bf16 (emulated on this GPU: slow)"
    choices = [
        Choice(bf16, Precision.bf16),
        Choice("fp16 (with loss scaling)", Precision.fp16),
        Choice("no (full fp32)", Precision.no),
    ]
    if fp8_available(answers, system):
        choices.append(Choice("fp8 (needs the installed fp8 backend)", Precision.fp8))
    return choices


def fp8_available(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """fp8 needs Ada/Hopper GPUs, a backend, and a YAML that may hold mixed_precision (so not DeepSpeed)."""
    backend = any(system.packages.get(name) for name in FP8_BACKENDS)
    return system.fp8 and backend and not uses_deepspeed(answers, system)


def explain_accumulation(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"global batch = {micro} (micro-batch) x accumulation x {world} (processes)"


def default_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """One micro-batch per process: the smallest valid target (accumulation 1)."""
    return int(answers.get("micro_batch") or 1) * world_size(answers, system)


def explain_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"a multiple of {micro * world} = {micro} (micro-batch) x {world} (processes)"


def launcher_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("SLURM (one srun starts every node; ranks come from SLURM)", Launcher.slurm),
        Choice("Per-node commands (run the printed command on each machine)", Launcher.per_node),
    ]


def rdzv_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("c10d (torch's rendezvous; tolerates nodes starting at different times)", "c10d"),
        Choice("static (fixed ranks; every node must start together)", "static"),
    ]
