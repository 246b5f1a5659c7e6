"""accelwiz's built-in trainer, launched by path through `accelerate launch` when `accelwiz run` gets no script.

    accelerate launch --config_file accelerate.yaml -m accelwiz.trainer.train --steps 30   # the same thing

An ordinary Accelerate loop on purpose, so what works here works in a user's script: `prepare()` on model,
optimizer and DataLoader (DeepSpeed reads the micro-batch from the DataLoader), `accumulate()`, clipping,
warm-up + cosine LR, `save_state`/`load_state` checkpoints, then a JSON report of what was measured.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # launched by path: make `accelwiz` importable from a source checkout too
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from accelwiz.errors import AccelwizError  # noqa: E402
from accelwiz.resolution.run import Run  # noqa: E402
from accelwiz.trainer.checkpoints import restore, save_final  # noqa: E402
from accelwiz.trainer.data import DataError, training_sequences  # noqa: E402
from accelwiz.trainer.finetune import MethodError, apply_method, lora_base_dtype, parameter_counts  # noqa: E402
from accelwiz.trainer.inputs import check_inputs  # noqa: E402
from accelwiz.trainer.loop import train  # noqa: E402
from accelwiz.trainer.models import (  # noqa: E402
    ModelChoiceError,
    ModelRef,
    build_config,
    build_model,
    load_pretrained,
    load_tokenizer,
)
from accelwiz.trainer.options import TrainerOptions, parse_args  # noqa: E402
from accelwiz.trainer.report import rank_report, report_run  # noqa: E402

EXIT_BAD_INPUT = 2


def make_accelerator() -> Any:
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, InitProcessGroupKwargs

    handlers = []
    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true" and not torch.cuda.is_available():
        # Without an explicit backend, Accelerate on a CPU-only machine leaves the backend unset and counts one
        # process while DeepSpeed has already formed a gloo group of N, so every ZeRO stage fails DeepSpeed's
        # batch-size identity (train_batch_size != micro * accumulation * world).
        handlers.append(InitProcessGroupKwargs(backend="gloo"))
    # The seedable sampler makes the shuffle a function of (seed, epoch), so a resumed run sees the same order.
    return Accelerator(kwargs_handlers=handlers, dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True))


def describe(accelerator: Any) -> dict[str, Any]:
    """Distributed facts for the report: type, world size, ZeRO stage and offload, precision, accumulation."""
    plugin = getattr(accelerator.state, "deepspeed_plugin", None)
    zero = plugin.deepspeed_config.get("zero_optimization", {}) if plugin is not None else {}
    return {
        "distributed_type": str(getattr(accelerator.distributed_type, "value", accelerator.distributed_type)),
        "world_size": accelerator.num_processes,
        "device": accelerator.device.type,
        "mixed_precision": accelerator.mixed_precision,
        "gradient_accumulation_steps": accelerator.gradient_accumulation_steps,
        "zero_stage": plugin.zero_stage if plugin is not None else None,
        "offload_optimizer": (zero.get("offload_optimizer") or {}).get("device", "none") if plugin else None,
        "offload_param": (zero.get("offload_param") or {}).get("device", "none") if plugin else None,
    }


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    uses_deepspeed = os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true"
    from accelwiz.trainer.library_notices import quiet_unused_libraries

    quiet_unused_libraries(uses_deepspeed=uses_deepspeed)  # before accelerate or TRL import deepspeed
    try:
        checked = check_inputs(opts, uses_deepspeed=uses_deepspeed)
    except AccelwizError as exc:
        return bad_input(exc.message, exc.hint)
    if checked.settings.post.is_posttraining:  # DPO and GRPO (the flags' or the plan's) train with TRL's trainers
        from accelwiz.trainer.trl_run import run_trl

        finish(run_trl(opts, checked))
        return 0
    settings = checked.settings
    opts = replace(
        opts,
        micro_batch=settings.micro_batch.value,
        gradient_accumulation=settings.gradient_accumulation.value,
        seq_len=settings.seq_len.value,
    )
    from accelerate.utils import set_seed

    accelerator = make_accelerator()
    apply_batch_settings(accelerator, opts)
    set_seed(opts.seed)
    try:
        model, tokenizer, model_config = load_model(checked.model, settings,
                                                    lora_base_dtype(accelerator, settings.method.value))
        sequences = training_sequences(opts.data, tokenizer, opts.seq_len)
        check_vocabulary(sequences, model_config)
    except (DataError, ModelChoiceError, MethodError) as exc:
        return bad_input(str(exc), exc.hint)
    counts = parameter_counts(model)
    accelerator.print(settings.summary(), file=sys.stderr)
    model, optimizer, loader = _prepared(accelerator, model, sequences, opts)
    if len(loader) == 0:
        return _too_little_data(accelerator, opts)
    state, resumed_from = restore(accelerator, opts)
    facts = describe(accelerator)
    result = train(accelerator, model, optimizer, loader, opts, state)
    probe = logits_probe(accelerator, model, sequences[0][:16])
    saved, checksum = save_final(accelerator, model, tokenizer, opts.output_dir, settings.method.value, facts)
    extra = {"saved": saved, "parameter_checksum": checksum, "logits_probe": probe,
             "ranks": rank_report(accelerator, model, result["loss_last"])}
    report_run(accelerator, opts, _run_facts(facts, checked, opts, counts), model_config, result, state,
               resumed_from, extra)
    finish(accelerator)
    return 0


def _prepared(accelerator: Any, model: Any, sequences: Any, opts: TrainerOptions) -> tuple[Any, Any, Any]:
    """The model, an AdamW over its trainable parameters and a shuffled DataLoader, through `prepare()`."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(sequences), batch_size=opts.micro_batch, shuffle=True, drop_last=True)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=opts.lr, weight_decay=0.0)
    return accelerator.prepare(model, optimizer, loader)


def _too_little_data(accelerator: Any, opts: TrainerOptions) -> int:
    """Fewer sequences than one batch per process: one line, exit 2."""
    accelerator.print(
        f"error: the data gives fewer than one batch of {opts.micro_batch} x {opts.seq_len} "
        f"tokens per process for {accelerator.num_processes} processes; use more data or "
        "smaller --micro-batch/--seq-len",
        file=sys.stderr,
    )
    return EXIT_BAD_INPUT


def _run_facts(facts: dict[str, Any], checked: Any, opts: TrainerOptions, counts: tuple[int, int]) -> dict[str, Any]:
    """The report's `run`: the distributed facts, the model and method, and the settings it trained with."""
    settings = checked.settings
    return {
        **facts,
        "model": str(settings.model.value),
        "model_kind": checked.model.kind,
        "method": settings.method.value,
        "parameters": counts[0],
        "trainable_parameters": counts[1],
        "micro_batch": opts.micro_batch,
        "seq_len": opts.seq_len,
        "gradient_checkpointing": settings.gradient_checkpointing.value,
        "settings": settings.for_report(),
    }


def bad_input(message: str, hint: str | None, code: int = EXIT_BAD_INPUT) -> int:
    """One line and a hint on stderr, exit 2: before any output is written."""
    if int(os.environ.get("RANK", "0")) == 0:  # one message, not one per worker
        print(f"error: {message}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)
    return code


def entry(argv: list[str] | None = None) -> int:
    """The process's entry point: any AccelwizError ends as its one line, hint and exit code (no traceback), and
    the status is recorded in $ACCELWIZ_EXIT_DIR (accelwiz/rank_status.py) like a user script's, so `accelwiz run`
    returns it even where `accelerate launch` reports every failing worker as 1."""
    from accelwiz.rank_status import record_status, status_of

    status = 1
    try:
        status = main(argv)
    except AccelwizError as exc:
        status = bad_input(exc.message, exc.hint, exc.exit_code)
    except SystemExit as exc:  # argparse: 2 for a bad flag, 0 for --help
        status = status_of(exc)
    finally:
        record_status(status)
    return status


def apply_batch_settings(accelerator: Any, opts: TrainerOptions) -> None:
    """Make accelerate and DeepSpeed use the resolved micro-batch and accumulation.

    accelerate reads ACCELERATE_GRADIENT_ACCUMULATION_STEPS over the constructor argument and, under DeepSpeed,
    takes the JSON's values over its own; writing the resolved values into both is the one way every backend
    trains with them. ZeRO-3 also gathers the full weights at the end, so the model can be saved whole.
    """
    # Count micro-batches across epochs instead of forcing a step at the end of the DataLoader: every optimizer step
    # then accumulates exactly `gradient_accumulation` batches even when an epoch holds fewer (a small corpus at a
    # long sequence length), as DeepSpeed, which counts its own micro-steps, already does.
    accelerator.gradient_state.plugin_kwargs.update(
        {"num_steps": opts.gradient_accumulation, "sync_with_dataloader": False}
    )
    plugin = getattr(accelerator.state, "deepspeed_plugin", None)
    if plugin is None:
        return
    config = plugin.deepspeed_config
    config["train_micro_batch_size_per_gpu"] = opts.micro_batch
    config["gradient_accumulation_steps"] = opts.gradient_accumulation
    config["train_batch_size"] = opts.micro_batch * opts.gradient_accumulation * accelerator.num_processes
    if plugin.zero_stage == 3:
        config.setdefault("zero_optimization", {})["stage3_gather_16bit_weights_on_model_save"] = True


def load_model(ref: ModelRef, settings: Run, base_dtype: Any = None) -> tuple[Any, Any, Any]:
    """(model ready to train, tokenizer or None for bytes, its transformers config); `base_dtype`: the frozen
    base's dtype for LoRA (None: fp32)."""
    method = settings.method.value
    if ref.pretrained:
        tokenizer = load_tokenizer(ref)
        quantization = None
        if method == "qlora":
            from accelwiz.trainer.finetune import quantization_config

            quantization = quantization_config()
        model = load_pretrained(ref, quantization_config=quantization, dtype=base_dtype)
    else:
        if method == "qlora":
            raise MethodError(f"QLoRA quantizes pretrained weights, and {ref.name!r} is a random initialisation",
                              hint="pass a checkpoint directory or hub id with --model, or use --method lora")
        tokenizer = None
        model = build_model(build_config(str(ref.path or ref.name)))
        if base_dtype is not None:
            model = model.to(base_dtype)
    config = model.config
    model = apply_method(
        model,
        method,
        settings.lora_rank.value,
        settings.lora_alpha.value,
        list(settings.lora_targets.value),
        settings.gradient_checkpointing.value,
        float(settings.lora_dropout.value),
        list(settings.lora_modules_to_save.value),
    )
    return model, tokenizer, config


def check_vocabulary(sequences: Any, model_config: Any) -> None:
    largest = int(sequences.max())
    if largest >= model_config.vocab_size:
        raise DataError(f"the tokenizer produced token id {largest}, beyond the model's vocab_size "
                        f"{model_config.vocab_size}", hint="use the tokenizer saved with this checkpoint")


def logits_probe(accelerator: Any, model: Any, input_ids: Any) -> dict[str, Any]:
    """The trained model's logits on a fixed input, so a reloaded model or adapter can be compared with it.

    Every rank runs the forward (under ZeRO-3 it gathers the weights collectively).
    """
    import torch

    model.eval()
    with torch.no_grad():
        logits = model(input_ids=input_ids.unsqueeze(0).to(accelerator.device)).logits.float()
    model.train()
    return {
        "input_ids": input_ids.tolist(),
        "last_position_head": logits[0, -1, :8].tolist(),
        "mean_abs": logits.abs().mean().item(),
    }


def finish(accelerator: Any) -> None:
    """End the run; on gloo, leave the process without destroying the process group.

    ProcessGroupGloo's destructor joins its worker threads while holding the GIL, and a worker that still has to
    drop a Python reference (DDP's gradient buckets) waits for that GIL forever: an intermittent hang at exit
    (pytorch/pytorch#56297, #75097) seen here in about one 2-process CPU run in ten. Once every rank has passed
    the barrier and the report is written there is nothing left to clean up, so exit without the destructor.
    """
    import torch.distributed as dist

    accelerator.wait_for_everyone()
    if dist.is_available() and dist.is_initialized() and dist.get_backend() == "gloo":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    accelerator.end_training()


if __name__ == "__main__":
    raise SystemExit(entry())
