"""The built-in trainer's loop (accelwiz/trainer/train.py prepares the run and reports it): an ordinary Accelerate
loop, `accumulate()`, clipping, warm-up + cosine LR set by hand, and `save_state` checkpoints that a resumed run
continues from exactly.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from accelwiz.trainer.checkpoints import TrainerState, checkpoint_dir, prune, write_state
from accelwiz.trainer.options import TrainerOptions


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


def save_checkpoint(accelerator: Any, opts: TrainerOptions, state: TrainerState) -> Path:
    directory = checkpoint_dir(opts.output_dir, state.step)
    accelerator.save_state(str(directory))  # every rank: DeepSpeed saves its shards collectively
    if accelerator.is_main_process:
        write_state(directory, state)  # last, so a directory without it is an interrupted save
        prune(opts.output_dir, opts.keep_checkpoints)
    accelerator.wait_for_everyone()
    return directory


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
            loss = _micro_step(accelerator, model, optimizer, input_ids, lr_at(step, opts), opts.max_grad_norm)
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
                saved = _resume_point(step, epoch, consumed, len(loader), tokens)
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
    return _measurements(step, losses, tokens - state.tokens_seen, seconds, checkpoints)


def _micro_step(accelerator: Any, model: Any, optimizer: Any, input_ids: Any, lr: float, max_grad_norm: float
                ) -> Any:
    """One micro-batch forward and backward under accumulate(); the optimizer steps when the gradients sync."""
    for group in optimizer.param_groups:  # before backward: DeepSpeed steps inside backward()
        group["lr"] = lr
    with accelerator.accumulate(model):
        loss = model(input_ids=input_ids, labels=input_ids).loss
        accelerator.backward(loss)
        if accelerator.sync_gradients and max_grad_norm > 0:
            accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
    return loss


def _resume_point(step: int, epoch: int, consumed: int, batches: int, tokens: int) -> TrainerState:
    """Where a resumed run starts: after `consumed` batches of this epoch, or at the next epoch's start."""
    at_end = consumed == batches
    return TrainerState(step=step, epoch=epoch + at_end, batches_in_epoch=0 if at_end else consumed,
                        tokens_seen=tokens)


def _measurements(step: int, losses: list[float], trained_tokens: int, seconds: float, checkpoints: list[str]
                  ) -> dict[str, Any]:
    """What the run report records of the loop."""
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
