"""accelwiz's built-in trainer, launched by path through `accelerate launch` when `accelwiz run` gets no script.

    accelerate launch --config_file accelerate.yaml -m accelwiz.trainer.train --steps 30   # the same thing

An ordinary Accelerate loop on purpose, so what works here works in a user's script: `prepare()` on model,
optimizer and DataLoader (DeepSpeed reads the micro-batch from the DataLoader), `accumulate()`, clipping,
warm-up + cosine LR, `save_state`/`load_state` checkpoints, then a JSON report of what was measured.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # launched by path: make `accelwiz` importable from a source checkout too
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from accelwiz.trainer.checkpoints import (
    TrainerState,
    checkpoint_dir,
    latest_checkpoint,
    prune,  # noqa: E402
    write_state,
)
from accelwiz.trainer.data import DataError, byte_sequences, load_text  # noqa: E402
from accelwiz.trainer.models import ModelChoiceError, build_config, build_model  # noqa: E402
from accelwiz.trainer.options import TrainerOptions, parse_args  # noqa: E402
from accelwiz.trainer.report import estimate_for_run, peak_memory_bytes, write_report  # noqa: E402

EXIT_BAD_INPUT = 2


def lr_at(step: int, opts: TrainerOptions) -> float:
    """Linear warm-up to `lr`, then cosine decay to a tenth of it, as a pure function of the optimizer step.

    Set on the optimizer by hand instead of through a prepared LR scheduler: Accelerate steps a prepared
    scheduler once per process per call and DeepSpeed steps its own, so a pure function of `step` is the one
    schedule that is identical under every backend and exact after `--resume`.
    """
    warmup = max(1, round(opts.steps * opts.warmup_ratio))
    if step < warmup:
        return opts.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, opts.steps - warmup)
    return opts.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


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


def save_checkpoint(accelerator: Any, opts: TrainerOptions, state: TrainerState) -> Path:
    directory = checkpoint_dir(opts.output_dir, state.step)
    accelerator.save_state(str(directory))  # every rank: DeepSpeed saves its shards collectively
    if accelerator.is_main_process:
        write_state(directory, state)  # last, so a directory without it is an interrupted save
        prune(opts.output_dir, opts.keep_checkpoints)
    accelerator.wait_for_everyone()
    return directory


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        text = load_text(opts.data)
        model_config = build_config(opts.model, opts.seq_len)
    except (DataError, ModelChoiceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    import torch
    from accelerate.utils import set_seed
    from torch.utils.data import DataLoader, TensorDataset

    accelerator = make_accelerator()
    set_seed(opts.seed)
    model = build_model(model_config)
    parameters = sum(p.numel() for p in model.parameters())
    loader = DataLoader(
        TensorDataset(byte_sequences(text, opts.seq_len)), batch_size=opts.micro_batch, shuffle=True, drop_last=True
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=opts.lr, weight_decay=0.0)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    if len(loader) == 0:
        accelerator.print(
            f"error: the text gives fewer than one batch of {opts.micro_batch} x {opts.seq_len} "
            f"bytes per process for {accelerator.num_processes} processes; use more text or "
            "smaller --micro-batch/--seq-len",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT

    state, resumed_from = restore(accelerator, opts)
    facts = describe(accelerator)
    result = train(accelerator, model, optimizer, loader, opts, state)
    run = {
        **facts,
        "model": opts.model,
        "parameters": parameters,
        "micro_batch": opts.micro_batch,
        "seq_len": opts.seq_len,
    }
    report_run(accelerator, opts, run, model_config, result, state, resumed_from)
    finish(accelerator)
    return 0


def restore(accelerator: Any, opts: TrainerOptions) -> tuple[TrainerState, Path | None]:
    """With --resume, load the newest complete checkpoint; returns where training starts."""
    found = latest_checkpoint(opts.output_dir) if opts.resume else None
    if found is None:
        if opts.resume:
            accelerator.print(f"no checkpoint in {opts.output_dir}; starting from step 0", file=sys.stderr)
        return TrainerState.start(), None
    path, state = found
    accelerator.load_state(str(path))
    accelerator.print(f"resuming from {path} at step {state.step}", file=sys.stderr)
    return state, path


def report_run(
    accelerator: Any,
    opts: TrainerOptions,
    run: dict[str, Any],
    model_config: Any,
    result: dict[str, Any],
    state: TrainerState,
    resumed_from: Path | None,
) -> None:
    """Gather every rank's peak memory; the main process writes run_report.json beside the estimate."""
    import torch

    peak, measured = peak_memory_bytes(accelerator.device.type)
    peaks = accelerator.gather(torch.tensor([peak], device=accelerator.device)).tolist()
    if not accelerator.is_main_process:
        return
    report = {
        **run,
        **result,
        "checkpoints": [c for c in result["checkpoints"] if Path(c).is_dir()],  # after pruning
        "start_step": state.step,
        "resumed_from": str(resumed_from) if resumed_from else None,
        "lr": opts.lr,
        "peak_memory_bytes": peaks,
        "peak_memory_measure": measured,
        "estimate": estimate_for_run({**run, "model_config": model_config.to_dict()}),
    }
    path = write_report(opts.output_dir, report)
    if result["losses"]:
        trained = (f"loss {result['loss_first']:.3f} -> {result['loss_last']:.3f}, "
                   f"{result['tokens_per_second']:,.0f} tokens/s, ")
    else:
        trained = "nothing left to train, "
    accelerator.print(
        f"done: step {result['steps']}/{opts.steps}, {trained}peak {max(peaks) / 2**20:,.0f} MiB ({measured}); "
        f"report: {path}",
        file=sys.stderr,
    )


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


def train(
    accelerator: Any, model: Any, optimizer: Any, loader: Any, opts: TrainerOptions, state: TrainerState
) -> dict[str, Any]:
    """The loop: runs until `opts.steps` optimizer steps, checkpointing as asked; returns the measurements."""
    from tqdm.auto import tqdm

    tokens_per_batch = opts.micro_batch * opts.seq_len * accelerator.num_processes
    step, epoch, skip, tokens = state.step, state.epoch, state.batches_in_epoch, state.tokens_seen
    losses: list[float] = []
    checkpoints: list[str] = []
    window_loss, window_batches, saving_seconds = 0.0, 0, 0.0
    progress = tqdm(
        total=opts.steps, initial=step, desc="train", unit="step", disable=not accelerator.is_local_main_process
    )
    started = time.perf_counter()
    model.train()
    while step < opts.steps:
        loader.set_epoch(epoch)
        batches = accelerator.skip_first_batches(loader, skip) if skip else loader
        consumed = skip
        for (input_ids,) in batches:
            for group in optimizer.param_groups:  # before backward: DeepSpeed steps inside backward()
                group["lr"] = lr_at(step, opts)
            with accelerator.accumulate(model):
                loss = model(input_ids=input_ids, labels=input_ids).loss
                accelerator.backward(loss)
                if accelerator.sync_gradients and opts.max_grad_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), opts.max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
            consumed, tokens = consumed + 1, tokens + tokens_per_batch
            window_loss, window_batches = window_loss + loss.detach().float(), window_batches + 1
            if not accelerator.sync_gradients:
                continue
            step += 1
            losses.append(accelerator.reduce(window_loss / window_batches, reduction="mean").item())
            window_loss, window_batches = 0.0, 0
            progress.update(1)
            progress.set_postfix(loss=f"{losses[-1]:.3f}", lr=f"{lr_at(step - 1, opts):.2e}")
            if step == opts.steps or (opts.save_every and step % opts.save_every == 0):
                saving = time.perf_counter()
                at_end = consumed == len(loader)
                saved = TrainerState(
                    step=step, epoch=epoch + at_end, batches_in_epoch=0 if at_end else consumed, tokens_seen=tokens
                )
                checkpoints.append(str(save_checkpoint(accelerator, opts, saved)))
                saving_seconds += time.perf_counter() - saving
            if step >= opts.steps:
                break
        else:
            epoch, skip = epoch + 1, 0
            continue
        break
    progress.close()
    seconds = time.perf_counter() - started - saving_seconds
    trained_tokens = tokens - state.tokens_seen
    return {
        "steps": step,
        "loss_first": losses[0] if losses else None,  # None (JSON null): resumed at the last step, nothing trained
        "loss_last": losses[-1] if losses else None,
        "losses": losses,
        "tokens": trained_tokens,
        "train_seconds": round(seconds, 3),
        "tokens_per_second": trained_tokens / seconds if seconds > 0 else 0.0,
        "checkpoints": checkpoints,
    }


if __name__ == "__main__":
    raise SystemExit(main())
