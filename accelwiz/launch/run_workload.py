"""The built-in trainer's run, resolved once by `accelwiz run` and shown, checked and launched as that one run.

`resolve_trainer_run` is exactly what each worker resolves (`trainer.settings.resolve_settings` over the trainer's
own argv), so the summary, the preflight's memory rules and the launch line all read the values the trainer will
train with: a `--micro-batch 64` given to `run` is "micro_batch 64 (flag)" in the summary, judged by AW501, and on
the launch line, never "micro_batch 1 (plan)" beside a line that trains 64.

No torch here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.estimate.spec import ModelSpec
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.run import Run

# the run's workload fields -> the effective values the summary table shows them as
SHOWN_AS = {"micro_batch": "micro_batch", "gradient_accumulation": "gradient_accumulation",
            "seq_len": "sequence_length", "gradient_checkpointing": "gradient_checkpointing",
            "method": "fine_tuning_method", "attention": "attention"}
# the flag that sets each, as `accelwiz run --help` spells it
FLAG_NAMES = {"micro_batch": "--micro-batch", "gradient_accumulation": "--gradient-accumulation",
              "seq_len": "--seq-len", "gradient_checkpointing": "--gradient-checkpointing", "method": "--method",
              "attention": "--attention"}


def resolve_trainer_run(config: Path, trainer_argv: list[str]) -> Run:
    """The run each worker of the built-in trainer resolves from `--config config` and the same argv."""
    from accelwiz.trainer.options import parse_args
    from accelwiz.trainer.settings import resolve_settings

    return resolve_settings(parse_args(["--config", str(config), *trainer_argv]))


def trainer_run(config: Path, trainer_argv: list[str]) -> Run:
    """The built-in trainer's run, resolved as each worker will resolve it; a value the launcher keeps from the
    files that a flag contradicts is refused. A missing config is the preflight's one line, not "no model"."""
    from accelwiz.launch.spec import require_config

    require_config(config)
    run = resolve_trainer_run(config, trainer_argv)
    refuse_flags_against_files(run)
    return run


def trainer_output_dir(trainer_argv: list[str]) -> Path:
    """Where the built-in trainer writes: its --output-dir, else its default (what the preflight must check)."""
    from accelwiz.trainer.options import parse_args

    return parse_args(trainer_argv).output_dir


def refuse_flags_against_files(run: Run) -> None:
    """A `--micro-batch`/`--gradient-accumulation` that contradicts a number the YAML or the DeepSpeed JSON
    writes: DeepSpeed keeps the file's (its batch assertion, its accumulation boundary) while the trainer's
    DataLoader would take the flag, a run half one and half the other. Refused in one line."""
    from accelwiz.resolution.workload import FLAG, file_layer

    written = file_layer(run.effective)
    for name in ("micro_batch", "gradient_accumulation"):
        given, file_value = getattr(run.workload, name), written.get(name)
        if given.source == FLAG and file_value is not None and file_value.value != given.value:
            raise UsageError(
                f"{FLAG_NAMES[name]} {given.value} contradicts the {file_value.source}'s {name} {file_value.value}, "
                "which the launcher keeps",
                hint=f"drop {FLAG_NAMES[name]}, or write {given.value} in the file (then run again)")


def run_model_spec(run: Run) -> ModelSpec | None:
    """The estimator's spec of the model that trains: the plan's when the plan names it, else a preset or a local
    config/checkpoint (a hub id is not fetched here: the memory rules are skipped, as `check` skips them)."""
    from accelwiz.errors import AccelwizError

    if run.model.source == "plan" and run.plan is not None:
        from accelwiz.plan_file import plan_model

        return plan_model(run.plan)[0]
    from accelwiz.estimate.models import named_model, resolve_model

    name = str(run.model.value)
    if named_model(name) is None and not Path(name).exists():
        return None
    try:
        return resolve_model(name)
    except AccelwizError:
        return None


def estimator_workload(run: Run, spec: ModelSpec | None) -> Workload | None:
    """The memory rules' workload: the run's, not a second resolution (None: no model to size, or LoRA targets
    that match nothing; the trainer's own check names the latter)."""
    from accelwiz.errors import AccelwizError

    if spec is None:
        return None
    try:
        return run.workload.for_estimator(spec)
    except AccelwizError:
        return None


def shown_effective(effective: EffectiveConfig, run: Run) -> EffectiveConfig:
    """The files' effective values with the run's workload in place of the plan's: what the summary table shows.
    A flag is named as "flag" with the value it replaced; the global batch is derived again from what trains."""
    from accelwiz.effective_value import EffectiveValue

    changed: dict[str, Any] = {}
    for name, row in SHOWN_AS.items():
        item, before = getattr(run.workload, name), getattr(effective, row)
        if item.source != "flag":
            continue
        was = f"; the {before.source} says {_plain(before.value)}" if before.is_set and before.value != item.value \
            else ""
        # the rules' view already took check's flags (effective.with_workload_flags): its note names the plan's
        note = before.note if before.source == "command line" and before.note else f"{FLAG_NAMES[name]}{was}"
        changed[row] = EffectiveValue(item.value, "flag", note=note)  # type: ignore[arg-type]
    if {"micro_batch", "gradient_accumulation"} & set(changed):
        world = run.world_size
        total = run.workload.value("micro_batch") * run.workload.value("gradient_accumulation") * world
        changed["global_batch"] = EffectiveValue(total, "derived", note="micro batch x gradient accumulation x "
                                                                         "world size")
    return replace(effective, **changed)


def _plain(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
