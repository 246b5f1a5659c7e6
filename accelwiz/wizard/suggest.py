"""Computed defaults, choices, explanations and answer checks: what the catalog asks of the machine and the
answers so far. Imports costing.py (the memory plan), never the other way round; the fine-tuning, strategy and
precision questions have modules of their own (fine_tuning.py, strategy_questions.py, precision_question.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard import costing as memory
from accelwiz.wizard.answers import Owner
from accelwiz.wizard.catalog_types import Choice


def world_size(answers: Mapping[str, Any], system: MachineProfile) -> int:
    gpus = answers.get("gpus", system.gpu_count)
    per_machine = int(gpus or 0) or int(answers.get("processes") or 1)  # CPU processes where there is no GPU
    return per_machine * int(answers.get("num_machines") or 1)


def default_machines(answers: Mapping[str, Any], system: MachineProfile) -> int:
    return system.num_machines


# ---- answer checks: each runs where its answer is given, with the answers so far ----------------------------


def verify_system(spec: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """A machine spec that names no preset, NxGPU spec or file fails at the question, with a did-you-mean."""
    from accelwiz.wizard.flow import load_machine

    load_machine(spec.strip() or "local")


def verify_model(name: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """An unknown model name fails at the question, with the estimator's suggestions, not at the end."""
    if name:
        from accelwiz.modelspec.lookup import resolve_model

        resolve_model(name)


def in_range(key: str, value: int, low: int, high: int | None = None, hint: str = "") -> None:
    if value < low or (high is not None and value > high):
        bounds = f"{low} to {high}" if high is not None else f"{low} or more"
        raise UsageError(f"{key} {value} is out of range: {bounds}", hint=hint or f"give {bounds}")


def verify_positive(key: str):  # noqa: ANN201 - a verifier factory
    def verify(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
        in_range(key, value, 1)

    return verify


def verify_gpus(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    in_range("gpus", value, 1, system.gpu_count, f"this machine has {system.gpu_count} GPU(s) per machine")


def verify_machines(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    in_range("num_machines", value, 1, 1024)


def verify_processes(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    in_range("processes", value, 1, 1024, "CPU processes per machine: 1 to 1024 (usually at most its cores)")


def default_seq_len(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """2048 tokens, or the model's positions when it has fewer (GPT-2: 1024)."""
    from accelwiz.resolution.workload import DEFAULT_SEQ_LEN

    positions = _positions(answers)
    return min(DEFAULT_SEQ_LEN, positions) if positions else DEFAULT_SEQ_LEN


def verify_seq_len(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Longer than the model's positions: transformers indexes past its position table (or the model sees
    positions it never learned). Refused at the question."""
    from accelwiz.resolution.workload import beyond_positions

    in_range("seq_len", value, 1)
    positions = _positions(answers)
    problem = beyond_positions(value, positions, str(answers.get("model")))
    if problem is not None:
        raise UsageError(problem, hint=f"give {positions} or less")


def _positions(answers: Mapping[str, Any]) -> int | None:
    if not answers.get("model"):
        return None
    from accelwiz.errors import AccelwizError
    from accelwiz.modelspec.lookup import resolve_model

    try:
        return resolve_model(str(answers["model"])).max_position_embeddings or None
    except AccelwizError:
        return None


def verify_clipping(value: float, answers: Mapping[str, Any], system: MachineProfile) -> None:
    import math

    if not math.isfinite(value) or value < 0:
        raise UsageError(f"gradient_clipping {value} must be a finite number >= 0", hint="0 turns clipping off")


def verify_global_batch(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """global batch = micro-batch x accumulation x processes: a multiple of one step's samples."""
    micro = int(answers.get("micro_batch") or 1)
    step = micro * world_size(answers, system)
    if value < 1 or value % step:
        below, above = value // step, value // step + 1
        nearest = [f"{n * step} (accumulation {n})" for n in (below, above) if n >= 1]
        raise UsageError(
            f"target_global_batch {value} is not a multiple of {step} = {micro} (micro-batch) x "
            f"{step // micro} (processes)",
            hint=f"choose {' or '.join(nearest)}",
        )


def verify_nvme_path(value: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """An absolute directory; when planning for this machine, one on a local NVMe drive."""
    if not value or not value.startswith("/"):
        raise UsageError(f"nvme_path {value!r} must be an absolute directory", hint="e.g. /local_nvme")
    if system.source != "probe":
        return  # another machine: its disks cannot be seen from here
    drive = nvme_drive_of(Path(value))
    if drive is None:
        raise UsageError(f"nvme_path {value} is not on a local NVMe drive",
                         hint="give a directory on an NVMe drive (`lsblk -d -o NAME,TRAN` lists them)")


def nvme_drive_of(path: Path) -> str | None:
    """The NVMe block device the existing part of `path` lives on (Linux sysfs), or None."""
    import os

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        device = os.stat(existing).st_dev
    except OSError:
        return None
    link = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    try:
        resolved = str(link.resolve())
    except OSError:
        return None
    return next((part for part in reversed(resolved.split("/")) if part.startswith("nvme")), None)


# ---- choices and defaults ------------------------------------------------------------------------------------


def default_checkpointing(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return memory.recommended_checkpointing(answers, system)


def owner_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("Accelerate (accelwiz run, or your own loop): the files fix batch and precision", Owner.accelerate),
        Choice("HF Trainer or TRL: TrainingArguments own batch, precision and clipping", Owner.trainer),
    ]


def explain_accumulation(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"global batch = {micro} (micro-batch) x accumulation x {world} (processes)"


def default_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """One micro-batch per process: the smallest valid target (accumulation 1)."""
    return int(answers.get("micro_batch") or 1) * world_size(answers, system)


def explain_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"a multiple of {micro * world} = {micro} (micro-batch) x {world} (processes)"
