"""How check's flags replace a plan's workload fields, said in one line.

The plan file (accelwiz/plan_file.py) is a document; the estimator's Workload for it is
`accelwiz.estimate.planned.plan_workload` (the resolution does not import the estimator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile


# check's workload flags, as the plan names the field each replaces
WORKLOAD_FLAG_FIELDS = {"micro_batch": ("--micro-batch", "training.micro_batch"),
                        "seq_len": ("--seq-len", "training.sequence_length"),
                        "gradient_checkpointing": ("--gradient-checkpointing", "training.gradient_checkpointing"),
                        "regime": ("--method", "fine_tuning.method"),
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
