"""What a plan file adds to the check of the unit beside it (`check_with_plans` in accelwiz/rules/engine.py): its
system, its model and its recorded Trainer arguments where the command line gives none, and the notes that say
so. The plan model (pydantic) and the estimator's registry are imported only when there is a plan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile
    from accelwiz.rules.engine import CheckResult


def refuse_flags_without_model(flags: dict[str, Any], where: str) -> None:
    """Workload flags with neither --model nor a plan describe no model: a UsageError naming them (`where`: the
    unit's first file, beside which no plan was found)."""
    from accelwiz.errors import UsageError

    given = ", ".join(f"--{name.replace('_', '-')}" for name in flags)
    raise UsageError(f"{given} need --model (the model whose workload they describe): none was given and "
                     f"no plan was found beside {where}",
                     hint="pass --model PRESET|config.json|PARAMS (or --plan FILE)")


def load_once(plans: dict[Path, Any], plan_path: Path, result: CheckResult) -> PlanFile | None:
    """The plan at `plan_path`, loaded once per check; None (its error reported once) when it cannot be read."""
    from accelwiz.plan_file import load_plan

    if plan_path not in plans:
        try:
            plans[plan_path] = load_plan(plan_path)
        except InputError as exc:
            plans[plan_path] = None
            result.input_errors.append(exc)
    return plans[plan_path]


def add_plan_facts(facts: dict[str, Any], loaded: PlanFile, plan_path: Path, result: CheckResult) -> None:
    """The plan's system, model and Trainer arguments into `facts` where the command line gave none, and a note
    for each thing the plan decides or the flags replace."""
    from accelwiz.modelspec.lookup import plan_model
    from accelwiz.plan_file import plan_system
    from accelwiz.resolution.plan import describe_overrides

    model, flags = facts["model"], facts["workload_flags"]
    facts["plan"] = loaded
    if facts["system"] is None:
        facts["system"] = plan_system(loaded)
    if model is None:
        facts["model"], why_not = plan_model(loaded)
        if why_not:
            result.note(f"{plan_path}: memory rules skipped: {why_not}")
    if flags or model is not None:
        result.note(f"{plan_path}: " + describe_overrides(loaded, flags, model.name if model is not None else None))
    if facts["training_args"] is None and loaded.training.owner == "trainer" and loaded.training.trainer_arguments:
        from accelwiz.config.training_args import parse_argv

        facts["training_args"] = parse_argv(list(loaded.training.trainer_arguments))
        result.note(f"{plan_path}: checked with the plan's Trainer arguments (training.trainer_arguments: "
                    f"{' '.join(loaded.training.trainer_arguments)}); pass `-- ARGS` or --training-args to check "
                    "others")
