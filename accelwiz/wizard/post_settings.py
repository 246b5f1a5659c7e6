"""The estimator's post-training settings (accelwiz.estimate.posttraining.PostTraining) for the wizard's answers
so far, what costing.plan_for costs a DPO or GRPO plan with, and whether vLLM is missing where training runs.
Imports no other wizard module but answers.py: predicates and costing read it without a cycle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Regime, TrainingKind

# `accelwiz run` trains DPO and GRPO with TRL in full or with LoRA: trainer/trl_run.py `_peft` refuses QLoRA.
POST_REGIMES = (Regime.full, Regime.lora)


def training_kind(answers: Mapping[str, Any]) -> TrainingKind:
    """The kind answered (a member, or its spelling from an answer given ahead), sft when not asked."""
    value = answers.get("kind") or TrainingKind.sft
    return value if isinstance(value, TrainingKind) else TrainingKind(str(getattr(value, "value", value)))


def regimes_for(answers: Mapping[str, Any]) -> tuple[Regime, ...]:
    """The fine-tuning methods offered for the kind answered, fastest first."""
    return POST_REGIMES if training_kind(answers).post else tuple(Regime)


def post_settings(answers: Mapping[str, Any], max_positions: int | None = None) -> Any:
    """The estimator's PostTraining for the answers so far, through the one resolution
    (accelwiz.resolution.posttraining: TRL's defaults, the lengths capped at `max_positions`, then the answers
    given); None for SFT. GRPO's steps per generation are the accumulation, as GRPOConfig sets them."""
    from accelwiz.estimate.resolved import to_post_training
    from accelwiz.resolution.posttraining import resolve_posttraining

    kind = training_kind(answers)
    if not kind.post:
        return None
    given: dict[str, Any] = {"kind": kind.value, "beta": answers.get("beta")}
    for key in ("max_prompt_length", "max_completion_length", "num_generations"):
        given[key] = int(answers[key]) if answers.get(key) else None
    generation = answers.get("generation")
    if kind is TrainingKind.grpo and generation is not None and answers.get("vllm_anyway") is not False:
        given["generation"] = str(getattr(generation, "value", generation))
    resolved = resolve_posttraining(flags=given, max_positions=max_positions)
    return to_post_training(resolved, accumulation=int(answers.get("gradient_accumulation") or 1))


def vllm_missing(system: MachineProfile) -> bool:
    """vLLM is known not to be installed where training runs: a profile that lists it as absent, or this machine
    (a probe) without it. A preset lists no packages: assumed present there."""
    if system.package_known("vllm"):
        return system.package_missing("vllm")
    if system.source != "probe":
        return False
    import importlib.util

    return importlib.util.find_spec("vllm") is None
