"""TRL's fused LM head (`Workload.loss_kernel` "trl-fused-head"): the loss without the [tokens x vocab] logits.

TRL 1.16's SFTTrainer, DPOTrainer and GRPOTrainer all patch the policy with `add_fused_lm_head`
(trl/trainer/sft_trainer.py, dpo_trainer.py, grpo_trainer.py `__init__`: "Compute the per-token log-probabilities in
chunks, without materializing the full logits") and take their loss from `model(..., labels=labels,
fused_lm_head=True).log_probs`. One owner for all three: the training step's workload carries the kernel and the
positions it scores (`Workload.scored_positions_per_sequence`), and estimate_memory counts it like any loss tail
(activations.py `logits_bytes`, `loss_transient_bytes`); posttraining.py only sets the workload.

Which positions (trl/trainer/utils.py `add_fused_lm_head`): the head projects `hidden_states[mask]`, the positions
whose shifted label is not -100, where Triton runs (`compact = _use_triton(device)`, trl/kernels/chunked_logprob.py:
CUDA or XPU with Triton installed); elsewhere (a CPU) every position, `hidden_states.reshape(-1, H)`, so the tile
shapes do not change from batch to batch. The labels decide the rest: SFT scores every position of a packed or
language-modelling batch (counted so: None); DPO (`DPOTrainer._compute_loss`: `input_ids.masked_fill(
completion_mask == 0, -100)`) and GRPO (`_get_per_token_logps_and_entropies`: `labels[:, :-logits_to_keep] =
-100`) score the completion tokens only: `max_completion_length` per sequence under Triton.

What it runs (`ChunkedLogProbFunction`, trl/kernels/chunked_logprob.py): tiles of at most `TOKEN_CHUNK_SIZE` (4,096)
scored positions by `_CHUNKED_LOGPROB_CHUNK_SIZE` (32,768) vocabulary entries in the compute dtype (autocast's, else
the hidden states'), one buffer (`mm_buf`) reused for every tile, in forward and again in backward. It saves
(`ctx.save_for_backward(hidden, weight, bias, targets, log_z, entropy)`) the scored rows of the hidden states (a
gathered copy standing in for the final norm's output the activations already count), the head's weight, and per
scored position the int64 target (`labels[mask]`, a new tensor) and the fp32 log-normaliser and entropy (all three
trainers request `entropy`): 16 bytes per scored position, no logits.

What it allocates and frees on top (`fused_head_transients`): in forward the tile and, where the compute dtype is
not theirs, the casts `hidden[chunk].to(compute_dtype)` (4,096 rows x H) and `weight[vocab chunk].to(compute_dtype)`
(32,768 x H: autocast over an fp32 head, TRL's fp32-loaded LoRA base or a prepared QLoRA's fp32 head); in backward
the same plus what `backward` accumulates in fp32 ("Always accumulate in fp32"): `grad_hidden`, zeros like the
scored hidden rows (4·N·H), and `grad_weight`, zeros like the whole head (4·V·H, where the head trains: full
fine-tuning), each cast back to its input's dtype at the `return`, while everything else is still live (+2·N·H and
+2·V·H for 16-bit ones). Measured: the real `ChunkedLogProbFunction` on a CPU under MemTracker, its torch folds run one
row at a time as the Triton kernels hold a row (tests/estimate/test_trl_fused_head.py). On a CPU, `_addmm_fp32`
upcasts both operands of a 16-bit product (`a.float()`, `b.float()`); CUDA (torch >= 2.8) accumulates with
`addmm(out_dtype=float32)` without copies, which is what is counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

FUSED_TOKENS = 4096  # chunked_logprob.TOKEN_CHUNK_SIZE
FUSED_VOCAB = 32768  # trainer/utils._CHUNKED_LOGPROB_CHUNK_SIZE
KEPT_PER_POSITION = 8 + 4 + 4  # the int64 target, the fp32 log_z and entropy saved for backward


def scored_positions(workload: Workload) -> int:
    """The positions one micro-step's head scores: `scored_positions_per_sequence` (None: every position) of each
    sequence."""
    return workload.micro_batch * (workload.scored_positions_per_sequence or workload.seq_len)


def fused_head_tile(positions: int, precision: str) -> int:
    """One tile of the fused head for `positions` scored positions: `min(N, 4096) x 32768` in the compute dtype."""
    return min(positions, FUSED_TOKENS) * FUSED_VOCAB * (4 if precision == "fp32" else 2)


def fused_head_transients(run: Workload, *, autocast: bool = False) -> tuple[int, int]:
    """What the head allocates and frees on top of what it keeps, (in forward, at backward's start): the tile, the
    casts to the compute dtype, and backward's fp32 accumulators with their casts back (module docstring).
    `autocast`: torch.autocast over fp32 weights (single process and DDP under mixed precision); `run` as its
    activations see it (activations.as_activations_run: a prepared QLoRA's fp32 stream computes in fp32)."""
    from accelwiz.estimate.layer_terms import fp32_stream

    spec, n = run.model, scored_positions(run)
    compute = 4 if run.precision == "fp32" else 2
    hidden = 4 if compute == 4 or fp32_stream(run, autocast) else 2
    weight = head_weight_width(run, autocast=autocast)
    casts = (compute * min(spec.vocab_size, FUSED_VOCAB) * spec.hidden_size if weight != compute else 0) + \
        (compute * min(n, FUSED_TOKENS) * spec.hidden_size if hidden != compute else 0)
    forward = fused_head_tile(n, run.precision) + casts
    grad_hidden = (4 + (hidden if hidden != 4 else 0)) * n * spec.hidden_size
    grad_weight = (4 + (weight if weight != 4 else 0)) * spec.vocab_size * spec.hidden_size \
        if run.regime == "full" else 0
    return forward, forward + grad_hidden + grad_weight


def head_weight_width(workload: Workload, *, autocast: bool = False) -> int:
    """Bytes per element of the LM head's weight as the head reads it: fp32 in fp32 training and under autocast
    over fp32 weights (full fine-tuning; a LoRA base loaded in fp32, as TRL loads a model named by path, or a
    prepared QLoRA's fp32 head); 16-bit where DeepSpeed or FSDP run the model in it, or the base is 16-bit."""
    if workload.precision == "fp32":
        return 4
    if not autocast:
        return 2
    if workload.regime == "full":
        return 4
    return workload.frozen_base_width or 2


def fused_head_kept(workload: Workload) -> int:
    """What the fused head keeps for backward beyond the activations: 16 bytes per scored position."""
    return KEPT_PER_POSITION * scored_positions(workload)


def fused_head_note(workload: Workload) -> str:
    """The loss tail's line in the estimate's assumptions, for SFT, DPO and GRPO alike."""
    every = workload.scored_positions_per_sequence is None
    scored = (f"every position of {workload.micro_batch}x{workload.seq_len}" if every else
              f"{workload.micro_batch}x{workload.scored_positions_per_sequence} completion positions (Triton)")
    tile = fused_head_tile(scored_positions(workload), workload.precision)
    trains = ", an fp32 gradient of the head accumulated in backward" if workload.regime == "full" else ""
    return (f"loss tail: TRL's fused LM head (add_fused_lm_head), no [tokens x vocab {workload.model.vocab_size:,}] "
            f"logits; it scores {scored}: one {tile / 2**20:.0f} MiB tile at a time in forward and backward"
            f"{trains}, {KEPT_PER_POSITION} bytes per scored position kept")
