"""What the memory rules and `convert` read from a plan as a workload, and how check's flags replace its fields.

The plan file (accelwiz/plan_file.py) is a document: its shape, where it lives, its model and machine. Turning
it into the estimator's Workload is resolution (`resolve_workload`, with the plan and flags layers only), so it
lives here, above the document and beside the resolver it calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.errors import AccelwizError
from accelwiz.plan_file import plan_model
from accelwiz.resolution.workload import resolve_workload
from accelwiz.vocab import RENAMED_WORKLOAD_FIELDS

if TYPE_CHECKING:
    from accelwiz.estimate.spec import ModelSpec
    from accelwiz.estimate.workload import Workload
    from accelwiz.plan_file import PlanFile


def plan_workload(plan: PlanFile, flags: dict[str, Any] | None = None,
                  model: ModelSpec | None = None) -> tuple[Workload | None, str | None]:
    """The estimator's Workload for what the plan assumed (with `flags`, check's --seq-len ..., replacing its
    fields), or (None, why not) when its model cannot be sized here: the plan and flags layers of
    `accelwiz.resolution.workload.resolve_workload`, for callers without the files (convert's memory table)."""
    spec, why = (model, None) if model is not None else plan_model(plan)
    if spec is None:
        return None, why
    renamed = {RENAMED_WORKLOAD_FIELDS.get(name, name): value for name, value in (flags or {}).items()}
    try:
        resolved = resolve_workload(plan=plan, flags=renamed, max_positions=spec.max_position_embeddings)
        return resolved.for_estimator(spec), None
    except AccelwizError as exc:
        return None, f"the plan's workload cannot be estimated: {exc.message}"


# check's workload flags, as the plan names the field each replaces
WORKLOAD_FLAG_FIELDS = {"micro_batch": ("--micro-batch", "training.micro_batch"),
                        "seq_len": ("--seq-len", "training.sequence_length"),
                        "gradient_checkpointing": ("--gradient-checkpointing", "training.gradient_checkpointing"),
                        "regime": ("--lora/--qlora", "fine_tuning.method"),
                        "lora_dropout": ("--lora-dropout", "fine_tuning.lora_dropout"),
                        "attention": ("--attention", "training.attention")}


def describe_overrides(plan: PlanFile, flags: dict[str, Any], model: str | None) -> str:
    """Which workload fields came from the command line and which from the plan, in one line."""
    given = [f"{WORKLOAD_FLAG_FIELDS[name][0]} {_shown(value)} replaces {WORKLOAD_FLAG_FIELDS[name][1]}"
             for name, value in flags.items() if name in WORKLOAD_FLAG_FIELDS]
    if model is not None:
        given.insert(0, f"--model {model} replaces model.name ({plan.model.name})")
    return "workload from the plan, " + ("; ".join(given) if given else "as recorded") + "; the rest from the plan"


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
