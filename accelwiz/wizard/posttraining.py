"""The post-training questions (issue 19): the kind of training and, for DPO and GRPO, the few TRL settings that
decide memory and whether the run starts. Defaults, choices, explanations and checks, in the estimator's
vocabulary (accelwiz.estimate.posttraining.PostTraining) and the plan's (`training.kind`, `beta`, ...).

The memory beside each choice comes from costing.plan_for, which costs a DPO or GRPO plan with
estimate_posttraining (every phase: the TRL step with the reference model, the log-prob pass, generation).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard import costing as memory
from accelwiz.wizard.answers import Generation, Owner, Regime, TrainingKind
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.fine_tuning import default_regime
from accelwiz.wizard.post_settings import training_kind, vllm_missing

KIND_LABELS = {
    TrainingKind.sft: "SFT (supervised fine-tuning on text)",
    TrainingKind.dpo: "DPO (preference pairs: prompt, chosen, rejected)",
    TrainingKind.grpo: "GRPO (completions generated per prompt, scored by your reward function)",
}
GENERATION_LABELS = {
    Generation.hf: "HF generate in the training processes",
    Generation.vllm_colocate: "vLLM colocate (vLLM inside each training process, a share of its GPU)",
    Generation.vllm_server: "vLLM server (`trl vllm-serve` on GPUs of its own)",
}


# ---- the kind -----------------------------------------------------------------------------------------------


def kind_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    """Each kind, with the fastest strategy that fits it and its memory per GPU (on a machine with GPUs)."""
    return [Choice(label + _best({**answers, "kind": kind}, system), kind) for kind, label in KIND_LABELS.items()]


def explain_kind(answers: Mapping[str, Any], system: MachineProfile) -> str:
    return ("DPO and GRPO train through TRL (`accelwiz run` hands the run to DPOTrainer / GRPOTrainer) and need a "
            "pretrained checkpoint with a tokenizer; the estimate adds their reference model and, for GRPO, the "
            "generation phase")


def _best(answers: Mapping[str, Any], system: MachineProfile) -> str:
    """Costed with the method asked, else the one the method question will default to (full, else LoRA, else
    QLoRA: the first that fits), named: a 7B on one 24 GiB GPU is 'LoRA, single GPU, ...', not 'does not fit'."""
    named = answers.get("regime") is not None
    regime = answers.get("regime") if named else default_regime(answers, system)
    if not system.gpus:  # host RAM, as `estimate` judges a CPU run (cpu_plan.py)
        from accelwiz.wizard.cpu_plan import choice_words

        return choice_words({**answers, "regime": regime}, system)
    plan = memory.plan_for({**answers, "regime": regime}, system)
    if plan is None:
        return ""
    best = plan.best_option(nvme=False)
    method = "" if named else f"{memory.REGIME_NAME[Regime(getattr(regime, 'value', regime))]}, "
    return f": {method}{best.label}, {best.per_gpu_bytes / GIB:.1f} GiB per GPU" if best else ": does not fit"


def refuse_regime(raw: Any, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Why QLoRA is not offered for DPO and GRPO."""
    if str(getattr(raw, "value", raw)).strip().lower() == Regime.qlora.value and training_kind(answers).post:
        raise UsageError(f"regime qlora is not offered for {training_kind(answers).value.upper()}: `accelwiz run` "
                         "trains DPO and GRPO with TRL in full or with LoRA (trainer/trl_run.py refuses QLoRA)",
                         hint="choose lora (the reference model is then the policy with its adapter disabled)")


def default_owner(answers: Mapping[str, Any], system: MachineProfile) -> Owner:
    """The files own the batch for SFT; TRL's trainers are HF Trainers that own it from their arguments (the JSON
    then says "auto", and init prints the TrainingArguments and TRL's own arguments that agree with the plan)."""
    return Owner.trainer if training_kind(answers).post else Owner.accelerate


# ---- lengths ------------------------------------------------------------------------------------------------


def _positions(answers: Mapping[str, Any]) -> int | None:
    from accelwiz.wizard.suggest import _positions as positions

    return positions(answers)


def default_prompt_length(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """The resolution's default (512, or half the model's positions when it has fewer than 1024)."""
    from accelwiz.resolution.posttraining import resolve_posttraining

    return resolve_posttraining(max_positions=_positions(answers)).max_prompt_length.value


def default_completion_length(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """The resolution's default (GRPOConfig's 512), or what the model's positions leave after the prompt."""
    from accelwiz.resolution.posttraining import resolve_posttraining

    default = resolve_posttraining(max_positions=_positions(answers)).max_completion_length.value
    positions = _positions(answers)
    left = positions - int(answers.get("max_prompt_length") or 0) if positions else None
    return min(default, left) if left else default


def verify_prompt_length(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    positions = _positions(answers)
    if value < 1 or (positions and value >= positions):
        bound = f"1 to {positions - 1}" if positions else "1 or more"
        raise UsageError(f"max_prompt_length {value} is out of range: {bound}",
                         hint="the completion needs positions of the model too" if positions else f"give {bound}")


def verify_completion_length(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """prompt + completion is one sequence: at most the model's positions (check's AW507 for SFT)."""
    from accelwiz.resolution.workload import beyond_positions

    if value < 1:
        raise UsageError(f"max_completion_length {value} is out of range: 1 or more", hint="give 1 or more")
    prompt = int(answers.get("max_prompt_length") or 0)
    positions = _positions(answers)
    problem = beyond_positions(prompt + value, positions, str(answers.get("model")))
    if problem is not None:
        raise UsageError(f"prompt {prompt} + completion {value}: {problem}",
                         hint=f"give {positions - prompt} or less (or go back and shorten the prompt)")


def explain_lengths(answers: Mapping[str, Any], system: MachineProfile) -> str:
    if training_kind(answers) is TrainingKind.dpo:
        return ("DPOConfig.max_length = prompt + completion: TRL truncates each pair to it; chosen and rejected "
                "run in one forward, so the step holds 2 x micro-batch sequences of that length")
    return ("GRPOConfig.max_completion_length caps each completion; the prompt length sizes the estimate (GRPO in "
            "TRL 1.16 does not truncate prompts): generation holds prompt + completion tokens per sequence")


# ---- GRPO's generation --------------------------------------------------------------------------------------


def generation_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    missing = " [vLLM is not installed here]" if vllm_missing(system) else ""
    choices = []
    for mode, label in GENERATION_LABELS.items():
        label += _best({**answers, "generation": mode}, system)
        choices.append(Choice(label + (missing if mode is not Generation.hf else ""), mode))
    return choices


def explain_generation(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    if vllm_missing(system):
        return ("vLLM is not installed here (pip install vllm); HF generate needs nothing more. `accelwiz run` "
                "generates with HF generate; a vLLM mode is written to the plan's TRL arguments for your own launch")
    return "vLLM colocate holds 30% of each GPU (vllm_gpu_memory_utilization); server mode takes GPUs from training"


def _server(answers: Mapping[str, Any]) -> bool:
    return (training_kind(answers) is TrainingKind.grpo and answers.get("generation") is Generation.vllm_server
            and answers.get("vllm_anyway") is not False)


def verify_generation(value: Generation, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Server mode on one machine needs a GPU for `trl vllm-serve` beside the training ones."""
    if value is Generation.vllm_server and system.gpu_count and system.num_machines == 1:
        from accelwiz.estimate.posttraining import PostTraining
        from accelwiz.estimate.posttraining_report import training_gpus

        try:
            training_gpus(PostTraining("grpo", generation="vllm-server"), system.gpu_count, 1)
        except UsageError as exc:
            raise UsageError(exc.message, hint="choose hf or vllm-colocate, or plan for a machine with more GPUs "
                                               "(--system)") from None


def default_gpus(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """Every GPU; with vLLM server mode on one machine, all but the server's (TRL's layout:
    `CUDA_VISIBLE_DEVICES=0 trl vllm-serve`, training on the rest; estimate/posttraining_report.training_gpus)."""
    if _server(answers) and int(answers.get("num_machines") or 1) == 1 and system.gpu_count > 1:
        from accelwiz.estimate.posttraining import PostTraining
        from accelwiz.estimate.posttraining_report import training_gpus

        return training_gpus(PostTraining("grpo", generation="vllm-server"), system.gpu_count, 1)
    return system.gpu_count


def explain_gpus(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    if not _server(answers):
        return None
    return ("vLLM server mode: `trl vllm-serve` runs on a GPU of its own (on one machine, one of these); "
            "give the training GPUs only")


# ---- the reference model and beta ---------------------------------------------------------------------------


def default_beta(answers: Mapping[str, Any], system: MachineProfile) -> float:
    """TRL's own (DPOConfig 0.1, GRPOConfig 0.0), as the estimator's PostTraining.effective_beta says it."""
    from accelwiz.estimate.posttraining import PostTraining

    return PostTraining(training_kind(answers).value).effective_beta  # type: ignore[arg-type]


def verify_beta(value: float, answers: Mapping[str, Any], system: MachineProfile) -> None:
    import math

    if not math.isfinite(value) or value < 0:
        raise UsageError(f"beta {value} must be a finite number >= 0", hint="DPO's usual 0.1; GRPO's 0.0 (no KL)")


def explain_beta(answers: Mapping[str, Any], system: MachineProfile) -> str:
    """How the reference model is held, given the kind and the fine-tuning chosen, with what it costs here."""
    kind = training_kind(answers)
    adapter = answers.get("regime") in (Regime.lora, Regime.qlora)
    if adapter:
        where = "reference: the policy with its LoRA adapter disabled (PEFT): no second copy, at any beta"
    else:
        where = ("reference: a whole copy of the model beside the policy (frozen, no gradients or optimizer "
                 "states), sharded only under ZeRO-3/FSDP")
        if kind is TrainingKind.grpo:
            where += "; GRPO with beta 0.0 (TRL's default) loads none"
    costs = []
    # GRPO: with and without a reference (0.04, the KL weight of the DeepSeekMath paper TRL cites); DPO's beta
    # does not change memory
    betas = (0.0, 0.04) if kind is TrainingKind.grpo and not adapter else (default_beta(answers, system),)
    for beta in betas:
        plan = memory.plan_for({**answers, "beta": beta}, system)
        best = plan.best_option(nvme=False) if plan else None
        if best is not None:
            costs.append(f"beta {beta:g}: {best.label}, {best.per_gpu_bytes / GIB:.1f} GiB per GPU")
    kl = "the weight of the KL to the reference" if kind is TrainingKind.grpo else "DPO's temperature"
    return f"beta is {kl}; {where}" + (f" ({'; '.join(costs)})" if costs else "")


# ---- GRPO's reward ------------------------------------------------------------------------------------------


def verify_reward(value: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """FILE.py:FUNCTION, through the one reader of reward specs that `run` uses too (trainer/rewards.py
    `find_reward`): read as bounded data and parsed, never imported: init runs no code of yours."""
    from accelwiz.trainer.rewards import find_reward

    find_reward(value, hint="give FILE.py:FUNCTION, FUNCTION a def NAME(completions, **kwargs) -> list[float]; "
                            "none: decide later")


def reward_todo(plan_path: Path) -> str:
    return (f"TODO: GRPO needs a reward: set `training.reward: FILE.py:FUNCTION` in {plan_path} (or pass --reward); "
            "`accelwiz run` refuses the plan until then")


def lengths_from_seq_len(preset: dict[str, Any]) -> None:
    """A `seq_len` answer for DPO or GRPO (whose question is asked only for SFT) is the sequence prompt +
    completion, so it is applied as those two (half and half where neither is given), or refused in one line
    where the lengths given say another sequence: never dropped (issue 30.6). Edits `preset` in place."""
    kind = str(getattr(preset.get("kind"), "value", preset.get("kind") or "sft")).strip().lower()
    if kind not in ("dpo", "grpo") or preset.get("seq_len") is None:
        return
    try:
        sequence = int(preset["seq_len"])
        prompt, completion = (None if preset.get(k) is None else int(preset[k])
                              for k in ("max_prompt_length", "max_completion_length"))
    except (TypeError, ValueError):
        return  # the questions' own parsing reports a value that is not a number
    if prompt is None and completion is None:
        prompt = sequence // 2
    prompt = sequence - completion if prompt is None and completion is not None else prompt
    completion = sequence - prompt if completion is None and prompt is not None else completion
    if prompt is None or completion is None or prompt < 1 or completion < 1 or prompt + completion != sequence:
        raise UsageError(
            f"answer `seq_len: {sequence}` is a {kind.upper()} run's prompt + completion, and the answers say "
            f"max_prompt_length {preset.get('max_prompt_length')} + max_completion_length "
            f"{preset.get('max_completion_length')}",
            hint="give seq_len or the two lengths, not both (or make them add up)")
    preset.pop("seq_len")
    preset["max_prompt_length"], preset["max_completion_length"] = prompt, completion
