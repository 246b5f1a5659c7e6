"""GRPO's own questions: num_generations, which must divide the generation batch (micro-batch x processes x
steps_per_generation), and the accumulation and target batch that keep that batch at 2 or more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard import costing as memory
from accelwiz.wizard.answers import TrainingKind
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.post_settings import training_kind


# ---- GRPO's batch: num_generations divides the generation batch ---------------------------------------------


def generation_batch(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """micro-batch x processes x steps_per_generation (GRPOConfig: the accumulation when unset)."""
    from accelwiz.wizard.suggest import world_size

    micro = int(answers.get("micro_batch") or 1)
    target = answers.get("target_global_batch") if answers.get("use_global_batch") else None
    if target:
        return int(target)
    return micro * world_size(answers, system) * int(answers.get("gradient_accumulation") or 1)


def generations_offered(batch: int) -> list[int]:
    return [n for n in range(2, batch + 1) if batch % n == 0]


def generation_choices_for_batch(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    batch = generation_batch(answers, system)
    return [Choice(f"{n} completions per prompt ({batch // n} prompt(s) per generation batch of {batch})", n)
            for n in generations_offered(batch)]


def default_generations(answers: Mapping[str, Any], system: MachineProfile) -> int | None:
    """TRL's 8 where it divides the batch, else the largest value below 8 that does, else the smallest above."""
    offered = generations_offered(generation_batch(answers, system))
    from accelwiz.resolution.posttraining import POST_DEFAULTS

    below = [n for n in offered if n <= POST_DEFAULTS["num_generations"]]  # GRPOConfig's 8
    return below[-1] if below else (offered[0] if offered else None)


def explain_generations(answers: Mapping[str, Any], system: MachineProfile) -> str:
    from accelwiz.wizard.suggest import world_size

    batch = generation_batch(answers, system)
    text = (f"GRPOConfig refuses a num_generations that does not divide the generation batch {batch} = "
            f"{int(answers.get('micro_batch') or 1)} (micro-batch) x {world_size(answers, system)} (processes) x "
            f"{batch // (int(answers.get('micro_batch') or 1) * world_size(answers, system))} (accumulation)")
    plan = memory.plan_for(answers, system)
    chosen = plan.chosen(answers) if plan else None
    generation = dict(chosen.phases).get("generation") if chosen else None
    if generation:
        text += (f"; memory does not depend on it: each process generates its micro-batch x accumulation at once "
                 f"(generation phase {generation / GIB:.1f} GiB per GPU)")
    return text


def refuse_generations(raw: Any, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Why a typed num_generations is not offered: it does not divide the generation batch, or is below 2."""
    try:
        value = int(str(raw).strip())
    except ValueError:
        return
    batch = generation_batch(answers, system)
    offered = ", ".join(map(str, generations_offered(batch)))
    why = "is below 2 (GRPO compares completions of one prompt)" if value < 2 else \
        f"does not divide the generation batch {batch}"
    raise UsageError(f"num_generations {value} {why}", hint=f"choose {offered}, or go back (`<`) and change the "
                                                            "micro-batch or the accumulation")


def default_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """One micro-batch per process (suggest.py); for GRPO at least 2, so that num_generations has a value."""
    from accelwiz.wizard.suggest import default_global_batch as smallest

    batch = smallest(answers, system)
    return 2 * batch if training_kind(answers) is TrainingKind.grpo and batch < 2 else batch


def default_accumulation(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """1; 2 for GRPO where one step holds a single sample (num_generations needs a batch of 2 or more)."""
    if training_kind(answers) is TrainingKind.grpo and generation_batch({**answers, "gradient_accumulation": 1},
                                                                system) < 2:
        return 2
    return 1


def verify_grpo_batch(key: str):  # noqa: ANN201 - a verifier factory
    """The accumulation or target global batch: positive, and for GRPO a generation batch of 2 or more."""
    from accelwiz.wizard.suggest import verify_global_batch, verify_positive

    base = verify_global_batch if key == "target_global_batch" else verify_positive(key)

    def verify(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
        base(value, answers, system)
        if training_kind(answers) is TrainingKind.grpo and generation_batch({**answers, key: value}, system) < 2:
            raise UsageError("GRPO needs a generation batch (micro-batch x processes x accumulation) of 2 or "
                             "more: num_generations >= 2 completions of one prompt must divide it",
                             hint=f"give {key} 2 or more")

    return verify
