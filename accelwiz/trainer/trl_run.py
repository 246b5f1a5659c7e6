"""`--kind dpo|grpo`: the built-in trainer hands the run to TRL's own DPOTrainer / GRPOTrainer.

    accelerate launch -m accelwiz.trainer.train --kind dpo --model CKPT --data prefs.jsonl --steps 4
    accelerate launch -m accelwiz.trainer.train --kind grpo --model CKPT --data prompts.jsonl --reward r.py:fn

The settings are the resolved run's (`settings.py`: the model, micro-batch, accumulation, method and LoRA, and
the post-training settings of accelwiz.resolution.posttraining, from the flags, the plan and the DeepSpeed JSON),
turned into a DPOConfig / GRPOConfig; TRL's trainer then runs under the Accelerate state `accelerate launch` set
up (DDP, DeepSpeed). Losses and GRPO's rewards from TRL's log go into
`run_report.json` with the kind. Bad input (a missing column, a reward file that does not load) is one line and
exit 2 before any model is loaded.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from accelwiz.trainer.inputs import CheckedInputs
from accelwiz.trainer.options import TrainerOptions


def run_trl(opts: TrainerOptions, checked: CheckedInputs) -> Any:
    """Train with TRL's trainer the run `checked` resolved (its inputs checked: trl_data.check_trl_inputs);
    returns the Accelerator for train.finish."""
    from accelwiz.trainer.trl_data import reward_of, trl_records

    import warnings

    # TRL 1.16 itself reads `model.is_gradient_checkpointing` (trl/models/utils.py, disable_gradient_checkpointing),
    # which transformers 5.24+ warns is deprecated, once per process: a line no user can act on (accelwiz passes
    # today's `activation_checkpointing`, _common). Only that message is silenced.
    warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    settings = checked.settings
    records, reward = trl_records(opts.data, settings.post.kind.value), reward_of(settings.post)
    trainer = _build(opts, settings, checked.model, records, reward)
    trainer.accelerator.print(settings.summary(), file=sys.stderr)
    started = time.perf_counter()
    trainer.train()
    _report(trainer, opts, settings, time.perf_counter() - started)
    return trainer.accelerator


def _common(opts: TrainerOptions, settings: Any) -> dict[str, Any]:
    """The TrainingArguments both configs share, from the resolved settings. The precision is the run's (the
    YAML's or JSON's mixed_precision, the plan's): TRL's own default (bf16 on) would override it, and with both
    off transformers takes the launcher's ACCELERATE_MIXED_PRECISION (training_args.py, "Mixed Precision")."""
    import torch

    on_gpu = torch.cuda.is_available()
    # not written anywhere (the resolution's default): the launcher's environment decides, as for any script
    precision = settings.precision.value if settings.precision.source != "default" else None
    return {
        "output_dir": str(opts.output_dir),
        "per_device_train_batch_size": settings.micro_batch.value,
        "gradient_accumulation_steps": settings.gradient_accumulation.value,
        "max_steps": opts.steps,
        "learning_rate": opts.lr,
        "warmup_steps": round(opts.steps * opts.warmup_ratio),
        "max_grad_norm": opts.max_grad_norm,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": opts.seed,
        "use_cpu": not on_gpu,
        "bf16": precision == "bf16",
        "fp16": precision == "fp16",
        _checkpointing_name(): bool(settings.gradient_checkpointing.value),
        "disable_tqdm": True,
    }


def _checkpointing_name() -> str:
    """TrainingArguments' checkpointing field as the installed transformers spells it: `activation_checkpointing`
    since 5.24, where the old `gradient_checkpointing` warns in every process that it goes in v6."""
    import dataclasses

    from transformers import TrainingArguments

    names = {field.name for field in dataclasses.fields(TrainingArguments)}
    return "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"


def _build(opts: TrainerOptions, settings: Any, model: Any, records: list[dict[str, Any]], reward: Any) -> Any:
    from datasets import Dataset

    data = Dataset.from_list(records)
    peft, post = _peft(settings), settings.post
    extra = {} if post.beta.value is None else {"beta": post.beta.value}
    if post.kind.value == "dpo":
        from trl import DPOConfig, DPOTrainer

        args = DPOConfig(**_common(opts, settings), max_length=post.sequence, **extra)
        return DPOTrainer(model=str(model.path), args=args, train_dataset=data, peft_config=peft)
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(**_common(opts, settings), num_generations=post.num_generations.value,
                      max_completion_length=post.max_completion_length.value, **extra)
    return GRPOTrainer(model=str(model.path), reward_funcs=reward, args=args, train_dataset=data, peft_config=peft)


def _peft(settings: Any) -> Any:
    """A LoRA config for PEFT when the method says so (QLoRA stays with the built-in loop)."""
    method = settings.method.value
    if method == "full":
        return None
    if method != "lora":
        from accelwiz.errors import UsageError

        raise UsageError(f"--kind dpo/grpo trains full or LoRA, not {method}", hint="pass --method lora")
    from peft import LoraConfig

    from accelwiz.trainer.finetune import ALL_LINEAR, is_all_linear

    rank = settings.lora_rank.value
    targets = list(settings.lora_targets.value or ["q_proj", "v_proj"])
    # peft expands "all-linear" only as a string: as the list ["all-linear"] it looks for a module of that name
    modules = ALL_LINEAR if all(is_all_linear(t) for t in targets) else targets
    saved = list(settings.lora_modules_to_save.value) or None  # PEFT's trainable copies (estimate/modules_to_save.py)
    return LoraConfig(r=rank, lora_alpha=settings.lora_alpha.value or 2 * rank, task_type="CAUSAL_LM",
                      lora_dropout=float(settings.lora_dropout.value), target_modules=modules, modules_to_save=saved)


def _reference(trainer: Any) -> dict[str, Any] | None:
    """How TRL holds the reference model: None where it keeps none (LoRA disables the adapter, GRPO's beta 0.0),
    else its wrapper and ZeRO stage (trl/models/utils.py prepare_deepspeed keeps stage 3, runs 1/2 at stage 0)."""
    ref = getattr(trainer, "ref_model", None)
    if ref is None:
        return None
    stage = ref.zero_optimization_stage() if hasattr(ref, "zero_optimization_stage") else None
    return {"wrapper": type(ref).__name__, "zero_stage": stage}


def _report(trainer: Any, opts: TrainerOptions, settings: Any, seconds: float) -> None:
    """run_report.json: the kind, TRL's logged losses (and GRPO's rewards), the settings and their sources."""
    from accelwiz.trainer.report import peak_memory_bytes, write_report

    accelerator = trainer.accelerator
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    losses = [float(entry["loss"]) for entry in logs]
    # GRPO logs the mean reward of the completions; DPO the margin of the implicit rewards (chosen - rejected)
    kind = settings.post.kind.value
    key = "reward" if kind == "grpo" else "rewards/margins"
    rewards = [float(entry[key]) for entry in logs if key in entry]
    peak, measured = peak_memory_bytes(accelerator.device.type)
    if not accelerator.is_main_process:
        return
    report = {
        "kind": kind,
        "trainer": type(trainer).__name__,
        "world_size": accelerator.num_processes,
        "distributed_type": str(getattr(accelerator.distributed_type, "value", accelerator.distributed_type)),
        "model": str(settings.model.value),
        "method": settings.method.value,
        "micro_batch": settings.micro_batch.value,
        "gradient_accumulation": settings.gradient_accumulation.value,
        "steps": trainer.state.global_step,
        "reference_model": _reference(trainer),
        "losses": losses,
        "loss_first": losses[0] if losses else None,
        "final_loss": losses[-1] if losses else None,
        "reward_key": key,
        "rewards": rewards,
        "reward_last": rewards[-1] if rewards else None,
        "num_generations": settings.post.num_generations.value if kind == "grpo" else None,
        "max_prompt_length": settings.post.max_prompt_length.value,
        "max_completion_length": settings.post.max_completion_length.value,
        "train_seconds": round(seconds, 3),
        "peak_memory_bytes": peak,
        "peak_memory_measure": measured,
        "settings": settings.for_report(),
        "log_history": trainer.state.log_history,
    }
    path = write_report(opts.output_dir, report)
    reward_text = f", reward {rewards[-1]:.3f}" if rewards else ""
    loss_text = f"loss {losses[0]:.3f} -> {losses[-1]:.3f}" if losses else "no loss logged"
    print(f"done: {kind} step {trainer.state.global_step}/{opts.steps}, {loss_text}{reward_text}; "
          f"report: {path}", file=sys.stderr)
