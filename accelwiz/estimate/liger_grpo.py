"""Liger's GRPO loss as TRL 0.17-1.12 run it (`use_liger_kernel=True`, resolution/liger_grpo.py): two
`[vocab, hidden]` tensors in the LM head's dtype at the end of the forward, each in a segment of its own.

Read in liger-kernel 0.6.4 (liger_kernel/chunked_loss/fused_linear_ppo.py, `LigerFusedLinearPPOBase.forward`), which
TRL's `compute_liger_loss` calls on the last hidden state and `lm_head.weight`:

* `grad_weight = torch.zeros_like(weight)`: a gradient accumulator the size of the LM head, whether or not the head
  trains (LoRA and QLoRA freeze it; the notebook's Qwen2-7B head in fp16: 152,064 x 3,584 x 2 B = 1.02 GiB). It is
  saved for backward (`ctx.save_for_backward(grad_input, grad_weight, grad_bias)`) and freed when Liger's backward,
  the first node of the model's backward, has run.
* each chunk (`chunk_size=1`: one completion) runs `torch.func.grad_and_value(compute_loss, argnums=(0, 1))`: the
  weight's gradient is always asked for, so every chunk makes a second `[vocab, hidden]` tensor
  (`chunk_grad_weight`) before `grad_weight.add_(chunk_grad_weight)` frees it; beside it the chunk's logits
  gradient, `[completion, vocab]` in the head's dtype, the weight gradient's matmul input.

Both head-sized tensors are larger than any block the forward left free (the checkpointed layer inputs are cut from
loading's free tail first), so the first step takes two new segments beside what loading and generation reserved,
and keeps them. Replayed through the caching-allocator model (benchmarks/grpo_liger_replay.py: loading's warmup
block and the weights cut from it, HF generate's growing DynamicCache, the checkpointed forward, Liger's loss, the
backward) TRL's GRPO QLoRA notebook (Qwen2-7B, 8 x 256 completions) reaches 8.86-8.92 GiB reserved for prompts of
120-300 tokens, loading 6.78, for the printed 8.832 and 6.773; without the two tensors 6.83-6.89: generation's
growing cache (0.22 GiB at its end) and the checkpointed forward fit in loading's free tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.resolution.liger_grpo import liger_grpo_releases, runs_liger_grpo
from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

SEGMENT = 2 * 2**20  # a large request's segment is rounded up to 2 MiB (the caching allocator's kRoundLarge)


@dataclass(frozen=True)
class LigerGrpoLoss:
    """What Liger's GRPO loss holds at its peak beyond the forward's tensors (module docstring)."""

    head_bytes: int  # one [vocab, hidden] tensor in the LM head's dtype: grad_weight, then each chunk's gradient
    chunk_bytes: int  # one completion's logits gradient, [completion, vocab] in the head's dtype

    @property
    def at_peak(self) -> int:
        return 2 * self.head_bytes + self.chunk_bytes

    @property
    def segments(self) -> int:
        """The two head-sized tensors' segments of their own, kept reserved after the first step."""
        return 2 * -(-self.head_bytes // SEGMENT) * SEGMENT

    def note(self) -> str:
        return (f"loss: Liger's GRPO loss ({liger_grpo_releases()}, LigerFusedLinearGRPOLoss, liger-kernel 0.6.4): "
                f"a {self.head_bytes / GIB:.2f} GiB gradient accumulator the size of the LM head (zeros_like, "
                "frozen or not) and each completion's weight gradient of that size beside it "
                f"(+{self.at_peak / GIB:.2f} GiB at the forward's end with the chunk's logits gradient), both in "
                f"segments of their own: +{self.segments / GIB:.2f} GiB reserved beside loading's")


def liger_grpo_loss(workload: Workload, strategy: Strategy, completion: int) -> LigerGrpoLoss | None:
    """Liger's GRPO loss for `workload` (its loss kernel as asked: "liger" on a TRL that runs it), or None."""
    if workload.loss_kernel != "liger" or not runs_liger_grpo(workload.stack.trl):
        return None
    spec = workload.model
    width = _head_width(workload, strategy)
    return LigerGrpoLoss(spec.vocab_size * spec.hidden_size * width, completion * spec.vocab_size * width)


def _head_width(workload: Workload, strategy: Strategy) -> int:
    """Bytes per element of `lm_head.weight` (zeros_like keeps its dtype): the frozen base's width under LoRA and
    QLoRA, else the trained parameters' (16-bit in pure bf16 and under DeepSpeed's 16-bit engine, else fp32)."""
    if workload.regime != "full":
        from accelwiz.estimate.frozen_base import frozen_base_width

        return frozen_base_width(workload, strategy)
    sixteen = workload.precision == "bf16" or (strategy.is_deepspeed and workload.precision != "fp32")
    return 2 if sixteen else 4
