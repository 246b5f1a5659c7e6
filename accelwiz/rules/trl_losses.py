"""AW805-AW808: the loss options trl 1.16 refuses, most of them only in the first training step (after every rank
has loaded the policy, the reference and, for GRPO, generated a batch).

Each condition is the one in TRL's source, cited at the rule (trl/trainer/grpo_trainer.py, grpo_config.py,
dpo_trainer.py, dpo_config.py); tests/posttraining/test_trl_losses_differential.py builds the real configs and
trainers on the tiny checkpoint, trains one step, and asserts TRL refuses exactly when a rule here fires.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.trl_batch import trl_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

# GRPOTrainer._compute_loss's branches (grpo_trainer.py: "Unknown loss type"), _compute_loss's importance
# sampling levels, _generate_and_score_completions' aggregations and reward scalings
GRPO_LOSSES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
GRPO_CHOICES = {
    "importance_sampling_level": ("token", "sequence"),
    "multi_objective_aggregation": ("sum_then_normalize", "normalize_then_sum"),
}
SCALE_REWARDS = ("group", "batch", "none")
# DPOTrainer._compute_loss's loss branches and f-divergences; the losses __init__ lets an f-divergence other than
# reverse_kl generalise (f_divergence_loss_types)
DPO_LOSSES = ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot",
              "aot_unpaired", "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm")
F_DIVERGENCES = ("reverse_kl", "forward_kl", "js_divergence", "alpha_divergence")
F_DIVERGENCE_LOSSES = ("sigmoid", "sigmoid_norm", "hinge", "ipo", "exo_pair", "robust", "discopop", "sft")


def _unknown(value: Any, known: tuple[str, ...]) -> bool:
    return not isinstance(value, str) or value not in known


@rule("AW805", "grpo-option-value-unknown", Severity.ERROR,
      fix="Use one of the values TRL's GRPOTrainer knows (listed in the message)")
def grpo_option_value_unknown(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks GRPO's `loss_type`, `importance_sampling_level`, `multi_objective_aggregation` and (when the rewards are
    summed, then normalised) `scale_rewards` against the values `GRPOTrainer` handles
    (`_compute_loss`, `_generate_and_score_completions`; `scale_rewards` true/false mean group/none).

    ## Why is this bad?
    GRPOConfig accepts any string; the trainer raises "Unknown loss type" (or "Invalid value for scale_rewards")
    only in the first training step, after every rank has loaded the model and generated a batch.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --loss_type gspo --num_generations 2
    distributed_type: NO
    ```
    """
    found = trl_view(ctx, "grpo")
    if found is None:
        return
    args = found[0]
    checks = [("loss_type", GRPO_LOSSES), *GRPO_CHOICES.items()]
    # GRPOConfig.__post_init__ maps True/False to "group"/"none"; only the summing aggregation reads the scaling
    scale = {True: "group", False: "none"}.get(args.trl["scale_rewards"], args.trl["scale_rewards"])
    if args.trl["multi_objective_aggregation"] == "sum_then_normalize" and _unknown(scale, SCALE_REWARDS):
        checks.append(("scale_rewards", SCALE_REWARDS))
    for name, known in checks:
        if name == "scale_rewards" or _unknown(args.trl[name], known):
            yield Finding(None, (), f"{args.trl_where(name)}: GRPOTrainer knows {', '.join(known)} and refuses "
                                    "anything else in the first training step")


@rule("AW806", "grpo-importance-sampling-bounds", Severity.ERROR,
      fix="Give vllm_importance_sampling_clip_min < clip_max (at least one for a *_truncate mode); VESPO with vLLM "
          "takes a token_* mode")
def grpo_importance_sampling_bounds(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks the vLLM importance-sampling options as `GRPOConfig.__post_init__` does, whether or not vLLM is used:
    `vllm_importance_sampling_clip_min` below `clip_max`, and with the correction on, a `*_truncate` mode with at
    least one of them; and as `GRPOTrainer.__init__` does (before vLLM is imported), the `vespo` loss with vLLM
    and the correction on only with a `token_truncate` or `token_mask` mode.

    ## Why is this bad?
    GRPOConfig raises on every rank as the training script starts; GRPOTrainer after the model has loaded.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --vllm_importance_sampling_clip_min 4 --num_generations 2
    distributed_type: NO
    ```
    """
    found = trl_view(ctx, "grpo")
    if found is None:
        return
    trl, where = found[0].trl, found[0].trl_where
    low, high = trl["vllm_importance_sampling_clip_min"], trl["vllm_importance_sampling_clip_max"]
    mode, correction = trl["vllm_importance_sampling_mode"], trl["vllm_importance_sampling_correction"]
    if low is not None and high is not None and low >= high:
        yield Finding(None, (), f"{where('vllm_importance_sampling_clip_min')} is not below "
                                f"{where('vllm_importance_sampling_clip_max')}: GRPOConfig refuses it")
    if correction and mode in ("token_truncate", "sequence_truncate") and low is None and high is None:
        yield Finding(None, (), f"{where('vllm_importance_sampling_mode')} truncates, and neither clip_min nor "
                                "clip_max is set: GRPOConfig refuses it")
    if trl["loss_type"] == "vespo" and trl["use_vllm"] and correction and mode not in ("token_truncate",
                                                                                        "token_mask"):
        shown = where("vllm_importance_sampling_mode")
        yield Finding(None, (), f"loss_type vespo with vLLM's importance sampling in {shown}: GRPOTrainer takes "
                                "token_truncate or token_mask only")


@rule("AW807", "dpo-loss-type-unknown", Severity.ERROR,
      fix="Use loss types and an f_divergence_type that DPOTrainer knows (listed in the message)")
def dpo_loss_type_unknown(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks every DPO `loss_type` and the `f_divergence_type` against the branches of `DPOTrainer._compute_loss`.

    ## Why is this bad?
    DPOConfig accepts any string; DPOTrainer raises "Unknown loss type" (or "Unknown f_divergence_type") in the
    first training step, after the policy and reference are loaded and the dataset tokenised on every rank.

    ## Example
    ```yaml
    # accelwiz check --kind dpo -- --loss_type sigmoid kto
    distributed_type: NO
    ```
    """
    found = trl_view(ctx, "dpo")
    if found is None:
        return
    args = found[0]
    losses = _losses(args)
    unknown = [loss for loss in losses if _unknown(loss, DPO_LOSSES)]
    if unknown:
        yield Finding(None, (), f"{args.trl_where('loss_type')}: DPOTrainer does not know "
                                f"{', '.join(map(str, unknown))} (it knows {', '.join(DPO_LOSSES)}) and refuses "
                                "it in the first training step")
    if _unknown(args.trl["f_divergence_type"], F_DIVERGENCES):
        yield Finding(None, (), f"{args.trl_where('f_divergence_type')}: DPOTrainer knows "
                                f"{', '.join(F_DIVERGENCES)} and refuses anything else in the first training step")


def _losses(args: Any) -> list[Any]:
    value = args.trl["loss_type"]
    return [value] if isinstance(value, str) else list(value or [])


@rule("AW808", "dpo-loss-combination-refused", Severity.ERROR,
      fix="Give one loss weight per loss type; keep f_divergence_type reverse_kl, use_weighting off or label_smoothing "
          "above 0 where the message says")
def dpo_loss_combination_refused(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks the DPO options TRL refuses together: `loss_weights` not one per `loss_type` (`DPOConfig.__post_init__`);
    in `DPOTrainer.__init__`, an `f_divergence_type` other than reverse_kl with a loss outside sigmoid,
    sigmoid_norm, hinge, ipo, exo_pair, robust, discopop, sft; `use_weighting` with aot or aot_unpaired; exo_pair
    with `label_smoothing` 0.0.

    ## Why is this bad?
    DPOConfig raises as the script starts on every rank; DPOTrainer after the policy has loaded.

    ## Example
    ```yaml
    # accelwiz check --kind dpo -- --loss_type sigmoid sft --loss_weights 1.0
    distributed_type: NO
    ```
    """
    found = trl_view(ctx, "dpo")
    if found is None:
        return
    args = found[0]
    trl, losses = args.trl, _losses(args)
    weights = trl["loss_weights"]
    if weights is not None and len(weights) != len(losses):
        yield Finding(None, (), f"{len(weights)} loss weight(s) ({args.trl_where('loss_weights')}) for {len(losses)} "
                                f"loss type(s) ({args.trl_where('loss_type')}): DPOConfig refuses it")
    outside = [loss for loss in losses if loss not in F_DIVERGENCE_LOSSES]
    if trl["f_divergence_type"] != "reverse_kl" and outside:
        yield Finding(None, (), f"{args.trl_where('f_divergence_type')} with loss {', '.join(map(str, outside))}: "
                                "DPOTrainer generalises only " + ", ".join(F_DIVERGENCE_LOSSES) + " to f-divergences")
    if trl["use_weighting"] and any(loss in ("aot", "aot_unpaired") for loss in losses):
        yield Finding(None, (), "use_weighting with an aot loss: DPOTrainer does not implement WPO weighting for "
                                "losses that sort the samples")
    if "exo_pair" in losses and trl["label_smoothing"] == 0.0:
        yield Finding(None, (), f"exo_pair with {args.trl_where('label_smoothing')}: DPOTrainer needs label smoothing "
                                "above 0 (the EXO paper: 1e-3)")
