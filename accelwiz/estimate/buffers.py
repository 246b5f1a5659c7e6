"""Communication buckets and gathered parameters: what a strategy holds on top of the model states.

DDP's gradient buckets, ZeRO-1/2's reduce bucket, ZeRO-3's gathered module, prefetch and persistent parameters,
FSDP's gathered units (fsdp_reserve.py) and full fine-tuning's reduce copies, QLoRA's dequantized linear: each
with the library default it follows and a note saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.fsdp_reserve import (
    fsdp_gathered_bytes,
    fsdp_root_parameters,
    fsdp_unit_gradient_bytes,
    fsdp_unit_gradient_width,
)
from accelwiz.estimate.zero3_gathered import (
    persistence_threshold,
    reduce_bucket_elements,
    zero3_gathered_buffer_bytes,
    zero3_prefetch_elements,
)
from accelwiz.estimate.zero3_reduce_copy import zero3_reduce_copies

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def buffer_bytes(workload: Workload, strategy: Strategy) -> tuple[float, list[str]]:
    """Communication buckets and gathered parameters that exist on top of the model states."""
    spec, trainable = workload.model, workload.trainable_parameters
    width = workload.compute_width
    buffers, notes = 0.0, []
    if strategy.kind == "ddp":
        from accelwiz.estimate.states import trainable_width  # the gradients' dtype (PEFT's fp32 adapters too)

        buffers += trainable_width(workload, strategy) * trainable
        notes.append("DDP gradient buckets: a second copy of the gradients (gradient_as_bucket_view=False)")
    elif strategy.kind in ("zero1", "zero2"):
        bucket = reduce_bucket_elements(workload, strategy)
        buffers += width * bucket
        notes.append(f"ZeRO reduce bucket: reduce_bucket_size {bucket:.3g} elements")
    elif strategy.kind == "zero3":
        threshold = persistence_threshold(workload, strategy)
        persistent = sum(t.numel for t in spec.tensors() if t.numel <= threshold)
        prefetch, bucket = zero3_prefetch_elements(workload, strategy), reduce_bucket_elements(workload, strategy)
        # the largest module gathered (its gradient too in full fine-tuning), one prefetch bucket (zero3_gathered.py)
        buffers += zero3_gathered_buffer_bytes(workload, strategy) + width * (bucket + persistent)
        gradient = "with its gradient" if workload.regime == "full" else "(frozen: no gradient)"
        notes.append(
            f"ZeRO-3: largest module gathered {gradient}, prefetch bucket {prefetch:.3g}, reduce bucket "
            f"{bucket:.3g}, persistent small parameters (≤{threshold:.3g} elements) replicated"
        )
        # counted in backward's moments only (step_phases.py): the copy lives inside a gradient hook
        notes += [note] if (note := zero3_reduce_copies(workload, strategy).note) else []
    elif strategy.is_fsdp and strategy.fsdp_wrap == "none":
        buffers += _one_unit(workload, strategy, notes)
    elif strategy.is_fsdp:
        root = fsdp_root_parameters(spec)
        buffers += fsdp_gathered_bytes(workload, strategy, root)
        buffers += fsdp_unit_gradient_width(workload) * spec.layer_parameters if workload.regime == "full" else 0
        notes.append(
            "FSDP: one wrapped block gathered and one prefetched "
            + ("(packed 4-bit)" if workload.regime == "qlora" else "(16-bit)")
            + f", the root unit ({root / 1e6:,.0f}M parameters outside the blocks) gathered from forward to "
            "the end of backward; one unit's gradients unsharded (full fine-tuning, in the "
            + ("bf16 shards' dtype)" if fsdp_unit_gradient_width(workload) == 2 else "fp32 reduce dtype)")
        )
    if workload.regime == "qlora":
        largest_linear = max(t.numel for t in spec.block_linears())
        buffers += 2 * largest_linear
        notes.append("QLoRA: one block linear dequantized to 16-bit at a time")
    return buffers, notes



def _one_unit(workload: Workload, strategy: Strategy, notes: list[str]) -> float:
    """FSDP with the whole model one unit (fsdp_wrap.py): all of it gathered from forward to the end of backward,
    and, for full fine-tuning (and FSDP1's flat LoRA gradient), its whole gradient unsharded before the one
    reduce-scatter."""
    gathered = fsdp_gathered_bytes(workload, strategy, fsdp_root_parameters(workload.model))
    width = fsdp_unit_gradient_width(workload)
    gradient = fsdp_unit_gradient_bytes(workload, strategy)
    notes.append(
        f"FSDP, the whole model one unit ({strategy.fsdp_wrap_note}): {gathered / 2**30:.2f} GiB of parameters "
        "gathered from forward to the end of backward (the root is not resharded after forward)"
        + (f", and its whole gradient unsharded ({gradient / 2**30:.2f} GiB in "
           + ("the bf16 shards' dtype)" if width == 2 else "the fp32 reduce dtype)") if gradient else "")
    )
    return gathered + gradient
