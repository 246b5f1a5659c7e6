"""The workload a unit trains, resolved once over its plan, files, Trainer arguments and check's flags: the memory
rules' Workload (`unit_workload`) and `--explain`'s rows (`unit_resolution`). Apart from the engine so that the
memory view can ask for the unit's stack without importing the engine that runs it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.rules.context import CheckContext
from accelwiz.vocab import RENAMED_WORKLOAD_FIELDS

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec

# check's workload flags, by the estimator's field names, as the resolution names them (accelwiz/vocab.py)
_FLAG_NAMES = RENAMED_WORKLOAD_FIELDS


def unit_workload(context: CheckContext, model: ModelSpec) -> Any:
    """The estimator's Workload for one unit: every layer resolved once (accelwiz.resolution.workload); None,
    with a note, when it cannot be built (LoRA targets that match nothing) or would not run as asked (a 16-bit
    loss under the files' autocast: estimate/loss_dtype.py)."""
    from accelwiz.errors import AccelwizError
    from accelwiz.estimate.configured_strategy import strategy_from_effective
    from accelwiz.estimate.loss_dtype import refuse_loss_dtype
    from accelwiz.estimate.resolved import to_workload

    resolved = unit_resolution(context, model.max_position_embeddings)
    context.stack = resolved.stack.value  # the memory rules' strategy reads its accelerate (memory_view.py)
    try:
        workload = to_workload(resolved, model)
        strategy = strategy_from_effective(context.effective, context.stack)  # on the unit's own stack
        if strategy is not None:  # the files' engine: DeepSpeed's 16-bit module, or autocast
            refuse_loss_dtype(workload, strategy)
        from accelwiz.estimate.fused_loss import refuse_fused_loss

        refuse_fused_loss(workload)  # Liger's fused loss where it cannot run (fused_loss.py)
        return workload
    except AccelwizError as exc:
        context.notes.append(f"memory rules skipped: {exc.message}")
        return None


def unit_resolution(context: CheckContext, max_positions: int | None = None) -> Any:
    """The unit's workload, resolved once over its plan, files, Trainer arguments and check's flags (the memory
    rules' workload and `--explain`'s rows)."""
    from accelwiz.resolution.posttraining import posttraining_workload
    from accelwiz.resolution.stack import with_profile_stack
    from accelwiz.resolution.workload import resolve_workload

    flags = {_FLAG_NAMES.get(name, name): value for name, value in context.workload_flags.items()}
    # a --system profile that lists its packages is the stack that trains, as the rules read it (rules/installed.py)
    flags = with_profile_stack(flags, context.system.packages if context.system is not None else None)
    resolved = resolve_workload(plan=context.plan, effective=context.effective, trainer_args=context.training_args,
                                flags=flags, max_positions=max_positions)
    # DPO/GRPO (TRL's arguments carry the kind): TRL's fused LM head, a --loss-kernel against it refused
    return posttraining_workload(resolved, getattr(context.training_args, "kind", None))
