"""What the plan file (`accelwiz init`) adds to a unit's effective values: what only the plan knows (sequence
length, activation checkpointing, attention, fine-tuning method), the batch where no file owns it, and the
rendezvous backend of a launch that starts each node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.effective_value import UNSET, EffectiveValue

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile


def from_plan(plan: PlanFile, values: dict[str, EffectiveValue], world: int | None) -> dict[str, EffectiveValue]:
    """What only the plan knows, and the batch where no file owns it."""
    training, found = plan.training, {}
    found["sequence_length"] = EffectiveValue(training.sequence_length, "plan", "plan", ("training", "sequence_length"))
    found["gradient_checkpointing"] = EffectiveValue(training.gradient_checkpointing, "plan", "plan",
                                                     ("training", "gradient_checkpointing"))
    found["attention"] = EffectiveValue(training.attention, "plan", "plan", ("training", "attention"))
    found["fine_tuning_method"] = EffectiveValue(plan.fine_tuning.method, "plan", "plan",
                                                 ("fine_tuning", "method"))
    for name, planned in (("micro_batch", training.micro_batch),
                          ("gradient_accumulation", training.gradient_accumulation)):
        current = values.get(name, UNSET)
        if current.source not in ("yaml", "json") and not current.is_written:
            found[name] = EffectiveValue(planned, "plan", "plan", ("training", name))
    if plan.launcher.supplies_rendezvous:
        found["rdzv_backend"] = _launched_rdzv_backend(plan, values.get("rdzv_backend", UNSET))
    micro = found.get("micro_batch", values.get("micro_batch", UNSET)).value
    accumulation = found.get("gradient_accumulation", values.get("gradient_accumulation", UNSET)).value
    if not values.get("global_batch", UNSET).is_set and None not in (micro, accumulation) and world:
        found["global_batch"] = EffectiveValue(micro * accumulation * world, "derived",
                                               note="micro batch x gradient accumulation x world size")
    return found


def _launched_rdzv_backend(plan: PlanFile, written: EffectiveValue) -> EffectiveValue:
    """The rendezvous backend of a plan whose launcher starts each node (its node commands and sbatch script pass
    --rdzv_backend): the plan's, else the YAML's (passed as the flag, so no longer ignored), else the launch default
    (accelwiz.launch.command's MULTI_NODE_RDZV_BACKEND, written out: the launch modules import this one; a test
    keeps the two equal)."""
    how = f"the {plan.launcher.kind} launch passes --rdzv_backend"
    if plan.launcher.rdzv_backend is not None:
        return EffectiveValue(plan.launcher.rdzv_backend, "plan", "plan", ("launcher", "rdzv_backend"), note=how)
    if written.is_written and written.is_set:
        return EffectiveValue(written.value, written.source, written.role, written.path, f"{how} with the file's",
                              written.written, written.invalid)
    return EffectiveValue("c10d", "derived", note=f"{how} c10d (its default; the plan and the YAML name none)")
