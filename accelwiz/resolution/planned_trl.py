"""The TRL arguments a DPO/GRPO run will have, resolved from the plan or from the resolved workload and
post-training settings, so that `check` and `run`'s preflight judge the DPOConfig/GRPOConfig that will be built
rather than TRL's defaults.

This is a use of the resolution (the model to train, the workload, the post-training settings), so it lives
here; `accelwiz/config/trl_arguments.py` keeps the shapes only (the fields, their defaults, reading them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.config.trl_arguments import TrlArguments


def planned_trl_arguments(plan: Any) -> TrlArguments | None:
    """For a DPO/GRPO plan, the TRL arguments the run will have: those the plan records for a TRL script that owns
    the batch (`training.trainer_arguments`, as `init` prints them), else those the built-in trainer hands
    DPOConfig/GRPOConfig (resolution.posttraining.trl_config_fields over the plan's workload). None for SFT."""
    from accelwiz.config.training_args import parse_argv
    from accelwiz.config.trl_arguments import with_trl
    from accelwiz.errors import AccelwizError
    from accelwiz.resolution.model import model_to_train
    from accelwiz.resolution.posttraining import resolve_posttraining
    from accelwiz.resolution.run import model_positions
    from accelwiz.resolution.workload import resolve_workload

    if plan.training.kind == "sft":
        return None
    if plan.training.owner == "trainer":
        recorded = list(plan.training.trainer_arguments)
        return with_trl(parse_argv(recorded), plan.training.kind, None, recorded)
    try:
        positions = model_positions(model_to_train(None, plan).name)
    except AccelwizError:
        positions = None  # a plan without a model to train: `run` refuses it; the lengths stay TRL's
    return built_in_trl_arguments(resolve_workload(plan=plan, max_positions=positions),
                                  resolve_posttraining(plan=plan, max_positions=positions))


def built_in_trl_arguments(workload: Any, post: Any) -> TrlArguments | None:
    """The TRL arguments the built-in trainer hands DPOConfig/GRPOConfig for this resolved workload and
    post-training settings (resolution.posttraining.trl_config_fields); None for SFT."""
    from accelwiz.config.training_args import parse_argv
    from accelwiz.config.trl_arguments import with_trl
    from accelwiz.resolution.posttraining import as_arguments, trl_config_fields

    if not post.is_posttraining:
        return None
    argv = as_arguments(trl_config_fields(workload, post))
    return with_trl(parse_argv(argv), post.kind.value, None, argv)
