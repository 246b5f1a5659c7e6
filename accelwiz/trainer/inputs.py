"""Everything the trainer will read, checked before anything is launched or written.

`accelwiz run` calls `check_inputs` before `accelerate launch` (so a bad `--model`, `--data` or QLoRA request is
one line and exit 2, not a traceback in every worker), and `train.py` calls it again for a direct
`accelerate launch -m accelwiz.trainer.train`. No torch is imported unless QLoRA has to be probed.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.errors import InputError, UsageError
from accelwiz.resolution.run import Run
from accelwiz.trainer.data import DataError, data_kind, sample_records
from accelwiz.trainer.models import ModelChoiceError, ModelRef, locate_model
from accelwiz.trainer.options import TrainerOptions
from accelwiz.trainer.settings import resolve_settings


@dataclass(frozen=True)
class CheckedInputs:
    settings: Run
    model: ModelRef


def check_inputs(opts: TrainerOptions, *, uses_deepspeed: bool) -> CheckedInputs:
    """The run's settings and model, or an InputError/UsageError (exit 2) naming the first problem."""
    settings = resolve_settings(opts)
    try:
        model = locate_model(str(settings.model.value))
    except ModelChoiceError as exc:
        raise InputError(str(exc), hint=exc.hint or None) from None
    method = settings.method.value
    if method == "qlora":
        if not model.pretrained:
            raise UsageError(f"QLoRA quantizes pretrained weights, and --model {model.name!r} is a random "
                             "initialisation", hint="pass a checkpoint directory or hub id with --model, "
                                                    "or use --method lora")
        if uses_deepspeed:
            raise UsageError("the built-in trainer runs QLoRA with one process or DDP, not under DeepSpeed",
                             hint="use a DDP or single-process config for QLoRA, or --method lora with DeepSpeed")
        from accelwiz.trainer.finetune import qlora_unsupported_reason

        reason = qlora_unsupported_reason()
        if reason is not None:
            raise UsageError(f"cannot train with QLoRA: {reason}",
                             hint="install a bitsandbytes with a backend for this device "
                                  "(pip install 'accelwiz[qlora]'), or use --method lora")
    if method != "full":
        check_lora_targets(model, settings)
    if opts.data is not None and not opts.data.exists():
        raise InputError(f"--data {opts.data}: no such file or directory", hint="check the path")
    if settings.post.is_posttraining:  # TRL's datasets and reward (trl_data.py), checked before the launch too
        from accelwiz.trainer.trl_data import check_trl_inputs

        check_trl_inputs(opts.data, settings.post, model)
        return CheckedInputs(settings, model)
    if data_kind(opts.data) in ("text", "jsonl", "dataset"):
        try:  # a sample, bounded: a FIFO or /dev/zero refused unread, a 7 GiB file judged by its first MiB
            records = sample_records(opts.data)
        except DataError as exc:
            raise InputError(str(exc), hint=exc.hint or None) from None
        if not model.pretrained and any("messages" in r for r in records):
            raise InputError(f"--data {opts.data} has chat `messages`, and the byte-level model "
                             f"{model.name!r} has no tokenizer or chat template",
                             hint="pass a pretrained checkpoint with --model, or records with a `text` field")
    return CheckedInputs(settings, model)


def check_lora_targets(model: ModelRef, settings: Run) -> None:
    """Named LoRA targets must be modules of the model: checked on an empty (meta-device) copy of its architecture,
    built from its config, so the names are exactly those peft will look for. `all-linear` always matches."""
    from accelwiz.trainer.finetune import MethodError, is_all_linear, lora_targets

    wanted = settings.lora_targets.value
    if not wanted or all(is_all_linear(t) for t in wanted):
        return
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from accelwiz.trainer.models import build_config

    try:
        if model.pretrained:
            config = AutoConfig.from_pretrained(str(model.path))
        else:
            config = build_config(str(model.path or model.name))
        with torch.device("meta"):
            empty = AutoModelForCausalLM.from_config(config)
    except ModelChoiceError as exc:
        raise InputError(str(exc), hint=exc.hint or None) from None
    except (OSError, ValueError, ImportError, KeyError):
        return  # an architecture this transformers cannot build: left to the trainer, whose own load reports it
    try:
        lora_targets(empty, list(wanted))
    except MethodError as exc:
        raise InputError(f"{exc} (lora_targets from the {settings.lora_targets.source})",
                         hint=exc.hint or None) from None
