"""Checkpoint layout in the output directory, and the trainer state that makes `--resume` exact.

`output_dir/checkpoints/step-000010/` holds what `Accelerator.save_state` writes (model, optimizer, RNG; for
DeepSpeed its own sharded layout) plus `trainer_state.json`, written last by the main process: a directory
without it is an interrupted save and is never resumed from.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

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
