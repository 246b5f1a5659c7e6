"""`estimate --config accelerate.yaml`: the estimate of the run the files and the plan describe, resolved as `run`
resolves it (accelwiz.resolution.run): the model, the workload, the post-training settings, the strategy the
config asks for and the machine the plan is for. Flags given beside it replace single values, as for `run`.

No torch: what `resolve_run` and the estimator read is text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.posttraining import PostTraining
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.plan_file import PlanFile
    from accelwiz.probe.model import MachineProfile
    from accelwiz.resolution.run import Run


@dataclass(frozen=True)
class PlannedRun:
    """What `estimate` needs of a resolved run."""

    run: Run
    workload: Workload
    post: PostTraining | None  # None: supervised
    strategy: Strategy | None  # None: the config's type has no GPU strategy (CPU, TPU): the report recommends one
    system: MachineProfile | None  # the plan's machine; None without a plan


def planned_run(config: Path, *, model: str | None, flags: dict[str, Any]) -> PlannedRun:
    """The run `accelerate launch --config_file config` would train, ready for the estimator; UsageError when the
    config or its plan does not name a model the estimator can size."""
    from accelwiz.estimate.configured_strategy import strategy_from_effective
    from accelwiz.estimate.resolved import to_post_training, to_workload
    from accelwiz.resolution.run import resolve_run

    if not config.is_file():
        raise UsageError(f"--config {config}: no such file", hint="pass the Accelerate YAML `accelwiz init` wrote")
    run = resolve_run(config, model=model or _sized_by_count(config), flags=flags)
    spec = _model_spec(run, model)
    workload = to_workload(run.workload, spec)
    post = to_post_training(run.post, accumulation=run.workload.gradient_accumulation.value) \
        if run.post is not None and run.post.is_posttraining else None
    system = None
    if run.plan is not None:
        from accelwiz.plan_file import plan_system

        system = plan_system(run.plan)
    # the strategy on the run's own stack (installed, or --stack): whether ZeRO-3 builds it under zero.Init
    strategy = strategy_from_effective(run.effective, run.workload.stack.value)
    return PlannedRun(run, workload, post, strategy, system)


def _sized_by_count(config: Path) -> str | None:
    """The parameter count a plan sized without a model records (`init --defaults`): `run` refuses to train it,
    and the estimate sizes it."""
    from accelwiz.defaults import find_plan

    path = find_plan(config)
    if path is None:
        return None
    from accelwiz.plan_file import load_plan

    model = load_plan(path).model
    return model.name if model.source == "parameters" else None


def _model_spec(run: Run, model: str | None) -> Any:
    """The estimator's spec of the model that trains: `--model`'s, else the plan's (a preset, a config.json or a
    checkpoint beside it, or its recorded parameter count), else the one the run names."""
    from accelwiz.modelspec.lookup import resolve_model

    if model is None and run.plan is not None:
        from accelwiz.modelspec.lookup import plan_model

        spec, why_not = plan_model(run.plan)
        if spec is None:
            raise UsageError(f"the plan's model cannot be sized: {why_not}", hint="pass --model PRESET|config.json")
        return spec
    return resolve_model(str(model or run.model.value))


def plan_workload(plan: PlanFile, flags: dict[str, Any] | None = None,
                  model: ModelSpec | None = None) -> tuple[Workload | None, str | None]:
    """The estimator's Workload for what the plan assumed (with `flags`, check's --seq-len ..., replacing its
    fields), or (None, why not) when its model cannot be sized here: the plan and flags layers of
    `accelwiz.resolution.workload.resolve_workload`, for callers without the files (convert's memory table)."""
    from accelwiz.errors import AccelwizError
    from accelwiz.modelspec.lookup import plan_model
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.workload import resolve_workload
    from accelwiz.vocab import RENAMED_WORKLOAD_FIELDS

    spec, why = (model, None) if model is not None else plan_model(plan)
    if spec is None:
        return None, why
    renamed = {RENAMED_WORKLOAD_FIELDS.get(name, name): value for name, value in (flags or {}).items()}
    try:
        resolved = resolve_workload(plan=plan, flags=renamed, max_positions=spec.max_position_embeddings)
        return to_workload(resolved, spec), None
    except AccelwizError as exc:
        return None, f"the plan's workload cannot be estimated: {exc.message}"
