"""Which TRL releases compute GRPO's loss with Liger's LigerFusedLinearGRPOLoss (`use_liger_kernel=True`, in 0.17
and 0.18 `use_liger_loss=True`), so that `--kind grpo --loss-kernel liger` runs, where `--stack trl==VERSION` names
one of them. No torch.

Read in each wheel's trl/trainer/grpo_trainer.py: 0.16.0 has no Liger loss; 0.17.0, 0.18.0, 0.26.2, 0.29.0, 1.0.0,
1.8.0 and 1.12.0 import `liger_kernel.chunked_loss.LigerFusedLinearGRPOLoss` and call it on the last hidden state
and `lm_head.weight` (`compute_liger_loss`); 1.13.0 and 1.14.0 replace it with a chunked path of their own, and from
1.15.0 GRPOTrainer patches the model with `add_fused_lm_head` (TRL 1.16: resolution/loss_kernel.py). What the loss
holds is estimate/liger_grpo.py's.
"""

from __future__ import annotations

from accelwiz.resolution.stack import Version

# the first release with Liger's GRPO loss, and the first without it again (module docstring)
FIRST_LIGER_GRPO: Version = (0, 17, 0)
FIRST_WITHOUT_LIGER_GRPO: Version = (1, 13, 0)


def runs_liger_grpo(trl: Version | None) -> bool:
    """Whether TRL `trl` (None: not said, TRL 1.16 assumed) computes GRPO's loss with LigerFusedLinearGRPOLoss."""
    return trl is not None and FIRST_LIGER_GRPO <= tuple(trl) < FIRST_WITHOUT_LIGER_GRPO


def liger_grpo_releases() -> str:
    """The releases, as the refusal and the estimate's note say them."""
    first, last = FIRST_LIGER_GRPO, FIRST_WITHOUT_LIGER_GRPO
    return f"TRL {first[0]}.{first[1]} to before {last[0]}.{last[1]}"
