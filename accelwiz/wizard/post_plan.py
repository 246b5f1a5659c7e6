"""What the DPO/GRPO answers write: the plan's `training` fields (kind, lengths, beta, num_generations, reward),
the header lines that say them with the estimate phase by phase, TRL's vLLM arguments, and what is left to do."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from accelwiz.vocab import GIB
from accelwiz.wizard.answers import Answers, Generation, Regime, TrainingKind

# TRL's GRPOConfig arguments for a vLLM generation (trl 1.16: use_vllm, vllm_mode colocate|server)
VLLM_MODE = {Generation.vllm_colocate: "colocate", Generation.vllm_server: "server"}


def post_fields(answers: Answers, output: Path) -> dict[str, Any]:
    """PlanTraining's post-training fields; the reward's file relative to the plan, as every path in it."""
    if not answers.kind.post:
        return {}
    fields: dict[str, Any] = {"kind": answers.kind.value, "max_prompt_length": answers.max_prompt_length,
                              "max_completion_length": answers.max_completion_length, "beta": answers.beta}
    if answers.kind is TrainingKind.grpo:
        fields["num_generations"] = answers.num_generations
        fields["reward"] = _relative_reward(answers.reward, output) if answers.reward else None
    return fields


def _relative_reward(reward: str, output: Path) -> str:
    file, _, function = reward.rpartition(":")
    path = Path(file).expanduser()
    if path.is_absolute():
        return reward
    return f"{Path(os.path.relpath(path.resolve(), output.parent.resolve())).as_posix()}:{function}"


def trl_arguments(answers: Answers) -> list[str]:
    """DPOConfig/GRPOConfig's own arguments that agree with the plan (trl 1.16 names: DPO's max_length is prompt +
    completion; GRPO has no prompt limit); with vLLM planned, its flags (the plan has no generation field)."""
    if not answers.kind.post:
        return []
    beta = answers.beta if answers.beta is not None else (0.1 if answers.kind is TrainingKind.dpo else 0.0)
    if answers.kind is TrainingKind.dpo:
        return ["--beta", f"{beta:g}", "--max_length", str(answers.sequence_length)]
    flags = ["--beta", f"{beta:g}", "--num_generations", str(answers.num_generations),
             "--max_completion_length", str(answers.max_completion_length)]
    mode = VLLM_MODE.get(answers.planned_generation)  # type: ignore[arg-type]
    return flags + (["--use_vllm", "--vllm_mode", mode] if mode else [])


def precision_flags(answers: Answers) -> list[str]:
    """TRL's configs turn bf16 on unless told (trl's _BaseConfig: bf16 = not fp16); a plan in fp32 (the CPU) says
    `--bf16 False`, as the built-in trainer passes it there (trainer/trl_run.py)."""
    if answers.kind.post and answers.precision.value == "no":
        return ["--bf16", "False"]
    return []


def reference_words(answers: Answers) -> str:
    """How TRL holds the reference model for these answers (estimate/posttraining.reference_bytes says why)."""
    if answers.regime in (Regime.lora, Regime.qlora):
        return "reference: the policy with its adapter disabled (PEFT), no second copy"
    if answers.kind is TrainingKind.grpo and not answers.beta:  # None: GRPOConfig's 0.0
        return "reference: none (GRPO with beta 0.0 loads no reference model)"
    return "reference: a whole frozen copy of the model beside the policy"


def post_lines(answers: Answers, option: Any) -> list[str]:
    """The header's post-training lines: the settings, the reference model, and the estimate phase by phase."""
    if not answers.kind.post:
        return []
    prompt, completion = answers.max_prompt_length, answers.max_completion_length
    beta = answers.beta if answers.beta is not None else (0.1 if answers.kind is TrainingKind.dpo else 0.0)
    text = f"Post-training: {answers.kind.value.upper()}, beta {beta:g}, prompt {prompt} + completion " \
           f"{completion} tokens"
    if answers.kind is TrainingKind.dpo:
        text += f" (DPOConfig max_length {answers.sequence_length})"
    else:
        generation = answers.planned_generation
        text += (f", {answers.num_generations} generations per prompt (generation batch {answers.global_batch}), "
                 f"generation {generation.value if generation else 'hf'}, reward {answers.reward or 'TODO'}")
    lines = [f"{text}; {reference_words(answers)}"]
    if option is not None and option.phases:
        phases = ", ".join(f"{name} {value / GIB:.1f}" for name, value in option.phases)
        lines.append(f"Estimate by phase (GiB allocated per GPU, {option.label}): {phases}; peak at "
                     f"{option.peak_phase}")
    return lines


def todos(answers: Answers, plan_path: Path) -> list[str]:
    """What must still be done before `accelwiz run` trains this plan."""
    from accelwiz.wizard.posttraining import reward_todo

    found = []
    if answers.kind is TrainingKind.grpo and not answers.reward:
        found.append(reward_todo(plan_path))
    if answers.vllm_anyway:
        found.append("TODO: vLLM is not installed here: `pip install vllm` where the plan trains (`accelwiz run` "
                     "generates with HF generate; the plan's TRL arguments say --use_vllm for your own launch)")
    return found
