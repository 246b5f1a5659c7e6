"""TRL's fused LM head (`Workload.loss_kernel` "trl-fused-head"): the loss without the [tokens x vocab] logits.

TRL 1.16's SFTTrainer patches the model with `add_fused_lm_head` (trl/trainer/sft_trainer.py: "Compute the
per-token log-probabilities in chunks, without materializing the full logits") and computes its loss from
`model(**inputs, fused_lm_head=True).log_probs`; its DPO and GRPO trainers do the same (estimate/posttraining.py).
The head runs `ChunkedLogProbFunction` (trl/kernels/chunked_logprob.py): tiles of at most `TOKEN_CHUNK_SIZE` (4,096)
positions by `_CHUNKED_LOGPROB_CHUNK_SIZE` (32,768) vocabulary entries in the compute dtype, one tile at a time, in
forward and again in backward; it saves the hidden states (already the activations'), the head's weight and, per
token, the fp32 log-normaliser and entropy (`ctx.save_for_backward(hidden, weight, bias, targets, log_z, ...)`).
What the loss keeps is those two per-token floats; what it allocates and frees is one tile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

FUSED_TOKENS = 4096  # chunked_logprob.TOKEN_CHUNK_SIZE
FUSED_VOCAB = 32768  # trainer/utils._CHUNKED_LOGPROB_CHUNK_SIZE


def fused_head_tile(positions: int, precision: str) -> int:
    """One tile of the fused head for `positions` scored positions: `min(N, 4096) x 32768` in the compute dtype."""
    return min(positions, FUSED_TOKENS) * FUSED_VOCAB * (4 if precision == "fp32" else 2)


def fused_head_kept(workload: Workload) -> int:
    """What the fused head keeps for backward beyond the activations: the fp32 log-normaliser and entropy of each
    position."""
    return 8 * workload.micro_batch * workload.seq_len


def fused_head_note(workload: Workload) -> str:
    tile = fused_head_tile(workload.micro_batch * workload.seq_len, workload.precision)
    return (f"loss tail: TRL's fused LM head (SFTTrainer's add_fused_lm_head), no [{workload.micro_batch}x"
            f"{workload.seq_len} tokens x vocab {workload.model.vocab_size:,}] logits: one {tile / 2**20:.0f} MiB "
            "tile at a time in forward and backward, two fp32 floats per token kept")
