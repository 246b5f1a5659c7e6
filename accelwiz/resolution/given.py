"""A workload value given twice, applied or refused the same way by every command.

A flag (`check --micro-batch`, `run --seq-len`, ...) replaces the plan's value: the memory rules judge it, the
launch line carries it, and the values table (`check --explain`, `run`'s summary) names it "flag" with the value
it replaced. A flag against a micro-batch or accumulation that the YAML or the DeepSpeed JSON writes is refused in
one line: DeepSpeed keeps the file's number (its batch assertion, its accumulation boundary) while the DataLoader
would take the flag, a run half one and half the other. `check`, `estimate --config` and `run` all say the same.

The effective file values (accelwiz/effective.py) hold what the files and the plan say; the rows shown here are
the resolution's (accelwiz/resolution/workload.py), laid over them for display and for the rules that read them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError
from accelwiz.resolution.workload import FLAG, MODEL, ResolvedWorkload, file_layer, resolve_workload
from accelwiz.vocab import RENAMED_WORKLOAD_FIELDS

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig

# the workload's fields -> the effective value (the values table's row) each is shown as
SHOWN_AS = {"micro_batch": "micro_batch", "gradient_accumulation": "gradient_accumulation",
            "seq_len": "sequence_length", "gradient_checkpointing": "gradient_checkpointing",
            "method": "fine_tuning_method", "attention": "attention"}
# the flag that sets each, as `check --help` and `run --help` spell it
FLAG_NAMES = {"micro_batch": "--micro-batch", "gradient_accumulation": "--gradient-accumulation",
              "seq_len": "--seq-len", "gradient_checkpointing": "--gradient-checkpointing", "method": "--method",
              "attention": "--attention"}


def refuse_flags_against_files(workload: ResolvedWorkload, effective: EffectiveConfig | None) -> None:
    """UsageError when a flag's micro-batch or accumulation contradicts the number a file writes (module doc)."""
    written = file_layer(effective)
    for name in ("micro_batch", "gradient_accumulation"):
        given, file_value = getattr(workload, name), written.get(name)
        if given.source == FLAG and file_value is not None and file_value.value != given.value:
            raise UsageError(
                f"{FLAG_NAMES[name]} {given.value} contradicts the {file_value.source}'s {name} {file_value.value}, "
                "which the launcher keeps",
                hint=f"drop {FLAG_NAMES[name]}, or write {given.value} in the file (then run again)")


def with_flags_shown(effective: EffectiveConfig, workload: ResolvedWorkload) -> EffectiveConfig:
    """The file values with the rows a flag set replaced by the resolution's: named "flag", with the value each
    replaced; the global batch derived again from what trains."""
    from accelwiz.effective_value import EffectiveValue

    changed: dict[str, Any] = {}
    for name, row in SHOWN_AS.items():
        item, before = getattr(workload, name), getattr(effective, row)
        if item.source == MODEL:  # the named model's own default over a plan written without a model
            changed[row] = EffectiveValue(item.value, MODEL, note=item.note)
            continue
        if item.source != FLAG or (before.source == FLAG and before.value == item.value):
            continue
        was = f"; the {before.source} says {_plain(before.value)}" if before.is_set and before.value != item.value \
            else ""
        changed[row] = EffectiveValue(item.value, FLAG, note=f"{FLAG_NAMES[name]}{was}")
    if {"micro_batch", "gradient_accumulation"} & set(changed):
        processes = effective.num_processes.value
        world = processes if isinstance(processes, int) and processes > 0 else 1
        total = workload.value("micro_batch") * workload.value("gradient_accumulation") * world
        changed["global_batch"] = EffectiveValue(total, "derived",
                                                 note="micro batch x gradient accumulation x world size")
    return replace(effective, **changed) if changed else effective


def given_flags(effective: EffectiveConfig, flags: dict[str, Any]) -> EffectiveConfig:
    """`check`'s door: its workload flags (by check's names, `regime` for the method) resolved over the files and
    the plan, refused where they contradict a file, and shown as the run's values."""
    if not flags:
        return effective
    renamed = {RENAMED_WORKLOAD_FIELDS.get(name, name): value for name, value in flags.items()}
    workload = resolve_workload(effective=effective, flags=renamed)
    refuse_flags_against_files(workload, effective)
    return with_flags_shown(effective, workload)


def _plain(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
