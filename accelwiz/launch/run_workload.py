"""The built-in trainer's run, resolved once by `accelwiz run` and shown, checked and launched as that one run.

`resolve_trainer_run` is exactly what each worker resolves (`trainer.settings.resolve_settings` over the trainer's
own argv), so the summary, the preflight's memory rules and the launch line all read the values the trainer will
train with: a `--micro-batch 64` given to `run` is "micro_batch 64 (flag)" in the summary, judged by AW501, and on
the launch line, never "micro_batch 1 (plan)" beside a line that trains 64.

No torch here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.run import Run

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
    return resolve_trainer_run(config, trainer_argv)  # resolve_run refuses a flag against a file's batch


def trainer_output_dir(trainer_argv: list[str]) -> Path:
    """Where the built-in trainer writes: its --output-dir, else its default (what the preflight must check)."""
    from accelwiz.trainer.options import parse_args

    return parse_args(trainer_argv).output_dir


def run_model_spec(run: Run) -> ModelSpec | None:
    """The estimator's spec of the model that trains: the plan's when the plan names it, else a preset or a local
    config/checkpoint (a hub id is not fetched here: the memory rules are skipped, as `check` skips them)."""
    from accelwiz.errors import AccelwizError

    if run.model.source == "plan" and run.plan is not None:
        from accelwiz.modelspec.lookup import plan_model

        return plan_model(run.plan)[0]
    from accelwiz.modelspec.lookup import named_model, resolve_model

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
    from accelwiz.estimate.resolved import to_workload

    if spec is None:
        return None
    try:
        return to_workload(run.workload, spec)
    except AccelwizError:
        return None


def shown_effective(effective: EffectiveConfig, run: Run) -> EffectiveConfig:
    """The files' effective values with the run's workload in place of the plan's: what the summary table shows
    (accelwiz/resolution/given.py, as `check --explain` shows it)."""
    from accelwiz.resolution.given import with_flags_shown

    return with_flags_shown(effective, run.workload)
