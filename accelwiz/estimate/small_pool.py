"""LoRA's small tensors: the segments the first optimizer step leaves in the allocator's small pool.

PyTorch's caching allocator serves requests of up to 1 MiB (kSmallSize) from 2 MiB segments of a pool of their
own, which the activations' large blocks never use and whose cache they cannot use. LoRA's A and B matrices are
mostly that small (r=16 in fp32: 256 KiB for a 4096-wide input, 896 KiB for a 14336-wide one), and so are their
gradients, AdamW's states and the step's foreach temporary (`_foreach_sqrt` of exp_avg_sq, one per parameter).
The states are static and counted at their size; the gradients (made in backward) and the temporary (made in
the step) take small-pool segments that stay reserved when the next step's loss makes the peak: on top of the
activations' reserve, at their size.

Measured (tests/fixtures/allocator_streams 17 and 25, an H200): Llama-3.1-8B and Mistral-7B with LoRA r=16 on
every linear (41.9M fp32 parameters, 0.156 GiB) take 0.156 GiB of small segments for the gradients in the
first backward, then 0.469 GiB in the first step (the two states and the temporary), and keep them.

Not counted where the tensors are large or not separate: full fine-tuning, DeepSpeed and FSDP (flat buffers),
and HF's 2022 Trainer loop (gradients kept through forward, a per-tensor AdamW with no foreach temporary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.allocator import K_SMALL_SIZE
from accelwiz.estimate.states import trainable_width

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def adapter_small_pool_bytes(workload: Workload, strategy: Strategy, peak_phase: str) -> tuple[float, str]:
    """The small-pool bytes LoRA's gradients and AdamW's foreach temporary keep reserved beside the activations'
    cache, and a note; nothing where the peak is the optimizer step itself (they are part of its allocated
    bytes there) or where the adapters are not separate small tensors."""
    if (not workload.adapter_matrices or strategy.kind not in ("single", "ddp") or workload.legacy_trainer
            or peak_phase in ("loading", "optimizer")):
        return 0.0, ""
    width = trainable_width(workload, strategy)
    small = sum(n * width for n in workload.adapter_matrices if n * width <= K_SMALL_SIZE)
    if not small:
        return 0.0, ""
    foreach = workload.optimizer == "adamw"
    held = small * (2 if foreach else 1)
    what = "gradients and AdamW's foreach temporary" if foreach else "gradients"
    return held, (f"allocator small pool: the adapters' {what} ({held / 2**30:.2f} GiB, tensors of 1 MiB or less) "
                  "keep 2 MiB segments the activations cannot use (small_pool.py)")
