"""How a Trainer or TRL run computes its causal-LM loss (the trainer layer's `loss_kernel`,
accelwiz/resolution/workload.py), from `use_liger_kernel` and `liger_kernel_config`. No torch.

transformers 5.25's Trainer applies Liger when `use_liger_kernel` is true (trainer.py: `apply_liger_kernel(self.model,
self.args.liger_kernel_config)`), and Liger's patch of a supported model installs the fused linear cross-entropy
unless the config turns `fused_linear_cross_entropy` off (estimate/fused_loss.py). TRL 1.16's trainers do turn it
off: SFTTrainer.__init__ sets `liger_kernel_config = {..., "fused_linear_cross_entropy": False}` (and refuses it
true) because it patches the model with its own chunked LM head (trl/trainer/sft_trainer.py, `add_fused_lm_head`),
so a TRL run keeps the standard loss kernel with Liger's layer kernels only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.resolution.sourced import TRAINER, Sourced

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments


def trainer_loss_kernel(args: TrainerArguments) -> Sourced | None:
    """The loss kernel the arguments give, or None where they leave the default: TRL's SFTTrainer computes its
    loss through its fused LM head whatever Liger says; a Trainer runs Liger's fused loss where use_liger_kernel
    turns it on."""
    if args.trl_config == "sft":
        return Sourced("trl-fused-head", TRAINER, "TRL 1.16's SFTTrainer patches the model with add_fused_lm_head "
                                                  "and takes its loss from chunked log-probabilities: no logits")
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
