"""Checkpoint layout in the output directory, and the trainer state that makes `--resume` exact.

`output_dir/checkpoints/step-000010/` holds what `Accelerator.save_state` writes (model, optimizer, RNG; for
DeepSpeed its own sharded layout) plus `trainer_state.json`, written last by the main process: a directory
without it is an interrupted save and is never resumed from. `restore` resumes from the newest complete one;
`save_final` writes the trained model (or adapter) beside them, through a temporary directory.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.trainer.options import TrainerOptions

STATE_FILE = "trainer_state.json"


@dataclass(frozen=True)
class TrainerState:
    step: int  # optimizer steps done
    epoch: int  # data epoch the next batch comes from
    batches_in_epoch: int  # batches of that epoch already consumed (per process)
    tokens_seen: int  # across all processes

    @classmethod
    def start(cls) -> TrainerState:
        return cls(step=0, epoch=0, batches_in_epoch=0, tokens_seen=0)


def checkpoints_root(output_dir: Path) -> Path:
    return output_dir / "checkpoints"


def checkpoint_dir(output_dir: Path, step: int) -> Path:
    return checkpoints_root(output_dir) / f"step-{step:06d}"


def write_state(directory: Path, state: TrainerState) -> None:
    """The state file marks a checkpoint complete (`complete_checkpoints`): written whole, so a save killed
    mid-write leaves no checkpoint that looks complete and does not load."""
    from accelwiz.atomic import atomic_write

    atomic_write(directory / STATE_FILE, json.dumps(asdict(state), indent=2) + "\n")


def complete_checkpoints(output_dir: Path) -> list[Path]:
    """Checkpoints whose save finished, oldest first."""
    root = checkpoints_root(output_dir)
    if not root.is_dir():
        return []
    found = [d for d in root.glob("step-*") if d.name[5:].isdigit() and (d / STATE_FILE).is_file()]
    return sorted(found, key=lambda d: int(d.name[5:]))  # by number: `step-1000000` is newer than `step-999999`


def latest_checkpoint(output_dir: Path) -> tuple[Path, TrainerState] | None:
    found = complete_checkpoints(output_dir)
    if not found:
        return None
    state = TrainerState(**json.loads((found[-1] / STATE_FILE).read_text()))
    return found[-1], state


def prune(output_dir: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` complete checkpoints; returns what was removed."""
    removed = complete_checkpoints(output_dir)[:-keep] if keep > 0 else []
    for directory in removed:
        shutil.rmtree(directory, ignore_errors=True)
    return removed


def save_final(
    accelerator: Any, model: Any, tokenizer: Any, output_dir: Path, method: str, facts: dict[str, Any]
) -> tuple[str, float | None]:
    """save_pretrained the trained model (full) or adapter (LoRA/QLoRA), with the tokenizer; returns (where,
    parameter checksum). Written to a temporary directory and renamed, so a directory is never half-written."""
    from accelwiz.trainer.report import parameter_checksum

    # Sharded weights (ZeRO-3, FSDP) are gathered by a collective call on every rank; the others are whole.
    sharded = facts.get("zero_stage") == 3 or facts.get("distributed_type") == "FSDP"
    state_dict = accelerator.get_state_dict(model) if sharded else None
    unwrapped = accelerator.unwrap_model(model)
    target = output_dir / ("model" if method == "full" else "adapter")
    checksum = None
    if accelerator.is_main_process:
        checksum = parameter_checksum(state_dict if state_dict is not None else unwrapped.state_dict())
        partial = output_dir / (target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with _no_progress_bar():  # transformers 5 draws "Writing model shards" even for one file: noise beside
            unwrapped.save_pretrained(str(partial), state_dict=state_dict, safe_serialization=True)  # "saved ..."
        if tokenizer is not None:
            tokenizer.save_pretrained(str(partial))
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    accelerator.wait_for_everyone()
    return str(target), checksum


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


@contextmanager
def _no_progress_bar() -> Iterator[None]:
    """transformers' own progress bars off for the block (its logging switch), as they were after it."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()
