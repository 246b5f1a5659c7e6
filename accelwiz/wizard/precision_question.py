"""The mixed-precision question: bf16 where the GPU computes it, fp8 where the GPU, a backend on the target and
the files (no DeepSpeed JSON) allow it, and why not when it was asked for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard import costing as memory
from accelwiz.wizard.answers import Precision
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.predicates import uses_deepspeed
from accelwiz.wizard.strategy_questions import strategy_choices


def default_precision(answers: Mapping[str, Any], system: MachineProfile) -> Precision:
    return memory.default_precision(system)


def precision_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    bf16 = "bf16" if system.native_bf16 else "bf16 (emulated on this GPU: slow)"
    choices = [
        Choice(bf16, Precision.bf16),
        Choice("fp16 (with loss scaling)", Precision.fp16),
        Choice("no (full fp32)", Precision.no),
    ]
    if fp8_available(answers, system):
        choices.append(Choice(f"fp8 ({fp8_backend(system)} backend)", Precision.fp8))
    return choices


# accelerate's fp8_config.backend for each package, in the order accelwiz prefers them.
FP8_BACKENDS = {"transformer_engine": "TE", "torchao": "AO", "msamp": "MSAMP"}


def fp8_backend(system: MachineProfile) -> str:
    """The first fp8 backend the TARGET has: from its profile's packages when it lists them (a probe or a saved
    profile), else Transformer Engine, which a preset is assumed to install."""
    return next((backend for package, backend in FP8_BACKENDS.items() if system.packages.get(package)), "TE")


def fp8_available(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """fp8 needs Ada/Hopper GPUs, a backend on the target, and a YAML that may hold mixed_precision (so not
    DeepSpeed). The backend is judged from the target's profile: where it lists packages (a probe of this machine
    or a saved profile) one must be installed; a preset lists none and is assumed to have one."""
    listed = any(system.package_known(name) for name in FP8_BACKENDS)
    backend = any(system.packages.get(name) for name in FP8_BACKENDS) if listed else True
    return system.fp8 and backend and not uses_deepspeed(answers, system)


def refuse_precision(raw: Any, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Why fp8 is not a choice here, when it was asked for: the GPU, the backend, or DeepSpeed.

    accelerate 1.15 itself runs fp8 under DeepSpeed (TE/torchao convert the model before deepspeed.initialize,
    MS-AMP wraps it), but only from `--mixed_precision fp8` on the launch command: with a deepspeed_config_file it
    raises when the YAML holds mixed_precision (DeepSpeedPlugin._deepspeed_config_checks), so the files the
    wizard writes cannot carry fp8 with ZeRO."""
    if str(getattr(raw, "value", raw)).strip().lower() != Precision.fp8.value:
        return
    gpu = system.gpus[0] if system.gpus else None
    if not system.fp8:
        where = f"sm_{gpu.compute_capability[0]}{gpu.compute_capability[1]}" if gpu else "no GPU"
        raise UsageError(f"precision: fp8 needs Ada or Hopper GPUs (sm_89 or newer); this machine has {where}",
                         hint="choose bf16 (or fp16 before Ampere)")
    listed = any(system.package_known(name) for name in FP8_BACKENDS)
    if listed and not any(system.packages.get(name) for name in FP8_BACKENDS):
        raise UsageError("precision: fp8 needs an fp8 backend on the machine, and none is installed",
                         hint="pip install transformer_engine (or torchao), or choose bf16")
    if uses_deepspeed(answers, system):
        strategy = answers.get("strategy")
        raise UsageError(
            f"precision: fp8 is not offered with DeepSpeed ZeRO ({getattr(strategy, 'label', strategy)}): with a "
            "deepspeed_config_file accelerate refuses mixed_precision in the YAML, so these files cannot carry fp8",
            hint=_fp8_strategy_hint(answers, system),
        )


def explain_precision(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    """On fp8 hardware with DeepSpeed chosen, why fp8 is not among the choices (the rest is plain)."""
    if system.fp8 and uses_deepspeed(answers, system):
        return ("fp8 is not offered with DeepSpeed ZeRO (accelerate refuses mixed_precision beside a "
                "deepspeed_config_file); FSDP and DDP take it")
    return None


def _fp8_strategy_hint(answers: Mapping[str, Any], system: MachineProfile) -> str:
    """The fastest strategy that takes fp8 (no DeepSpeed) and fits, named with its memory, or what to do."""
    plan = memory.plan_for(answers, system)
    offered = [c.value for c in strategy_choices(answers, system) if c.value.zero_stage is None]
    option = next((o for o in plan.fitting(nvme=False) if o.strategy in offered), None) if plan else None
    if option is not None:
        return (f"pass --strategy {option.strategy.value} for fp8 ({option.label}: {option.per_gpu_bytes / GIB:.1f}"
                f" GiB per GPU, fits), or keep ZeRO with --precision bf16")
    if plan is None and offered:
        return f"pass --strategy {offered[0].value} for fp8, or keep ZeRO with --precision bf16"
    return "no strategy without DeepSpeed fits this model here: keep ZeRO with --precision bf16"
