"""How a Trainer or TRL run computes its causal-LM loss (the trainer layer's `loss_kernel`,
accelwiz/resolution/workload.py), from TRL's trainer kind, `use_liger_kernel` and `liger_kernel_config`. No torch.

transformers 5.25's Trainer applies Liger when `use_liger_kernel` is true (trainer.py:
`apply_liger_kernel(self.model, self.args.liger_kernel_config)`), and Liger's patch of a supported model installs
the fused linear cross-entropy unless the config turns `fused_linear_cross_entropy` off (estimate/fused_loss.py).
TRL 1.16's SFTTrainer, DPOTrainer and GRPOTrainer do turn it off: each `__init__` sets `liger_kernel_config = {...,
"fused_linear_cross_entropy": False}` (and raises a ValueError where it is given true) because it patches the model
with its own fused LM head (trl/trainer/utils.py `add_fused_lm_head`) and takes its log-probabilities from
`model(..., fused_lm_head=True)` whatever the arguments say: a TRL run's loss kernel is "trl-fused-head"
(estimate/trl_fused_head.py), with Liger's layer kernels only where `use_liger_kernel` asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.resolution.sourced import TRAINER, Sourced

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments

# TRL's trainers that patch add_fused_lm_head, by accelwiz's training kind
TRL_TRAINERS = {"sft": "SFTTrainer", "dpo": "DPOTrainer", "grpo": "GRPOTrainer"}


def trl_fused_head(kind: str) -> Sourced:
    """The trainer layer's loss kernel of TRL's trainer for `kind` (sft, dpo, grpo): its fused LM head."""
    return Sourced("trl-fused-head", TRAINER, f"TRL 1.16's {TRL_TRAINERS[kind]} patches the model with "
                                              "add_fused_lm_head and takes its loss from chunked log-probabilities: "
                                              "no logits")


def trl_refuses_kernel(kernel: str, kind: str | None) -> str:
    """Why TRL's trainer for `kind` (None: DPO's and GRPO's) cannot compute its loss with `kernel` (standard or
    liger): the one text the resolution's and the estimator's refusals give."""
    trainer = TRL_TRAINERS.get(kind or "", "DPOTrainer and GRPOTrainer")
    if kernel == "liger":
        return (f"in TRL 1.16's {trainer} Liger's fused loss is off, for the trainer's own fused LM head "
                "(use_liger_kernel applies Liger's layer kernels only; liger_kernel_config "
                "fused_linear_cross_entropy true is a ValueError)")
    return (f"in TRL 1.16's {trainer} the log-probabilities always come from add_fused_lm_head: no argument runs "
            "the loss on the full logits")


def trainer_loss_kernel(args: TrainerArguments) -> Sourced | None:
    """The loss kernel the arguments give, or None where they leave the default: TRL's SFT, DPO and GRPO trainers
    compute their loss through their fused LM head whatever Liger says; a Trainer runs Liger's fused loss where
    use_liger_kernel turns it on."""
    # an SFTConfig's arguments, or TRL's for `check --kind dpo|grpo`, a recipe or a plan (config/trl_arguments.py)
    kind = "sft" if args.trl_config == "sft" else getattr(args, "kind", None) if args.trl_config == "trl" else None
    if kind in TRL_TRAINERS:
        return trl_fused_head(kind)
    if not args.is_given("use_liger_kernel"):
        return None
    written = args.given["use_liger_kernel"]
    if args["use_liger_kernel"] is not True:
        return Sourced("standard", TRAINER, written)
    if args.trl_config is not None:
        return Sourced("standard", TRAINER, f"{written}: TRL 1.16 turns Liger's fused loss off (SFTTrainer sets "
                                            "fused_linear_cross_entropy False) for its own chunked LM head")
    config = args["liger_kernel_config"]
    if isinstance(config, dict) and config.get("fused_linear_cross_entropy") is False:
        return Sourced("standard", TRAINER, f"{written}, liger_kernel_config fused_linear_cross_entropy false")
    return Sourced("liger", TRAINER, f"{written}: Liger's fused linear cross-entropy (the Trainer's liger patch)")
