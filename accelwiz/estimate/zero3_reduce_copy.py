"""ZeRO-3's reduce-scatter copy: each gradient bucket DeepSpeed flushes is flattened into a new buffer first.

DeepSpeed 0.19.8 (runtime/zero/stage3.py): a gradient's hook adds it to the ipg bucket
(`reduce_independent_p_g_buckets_and_remove_grads`), which is flushed first where the gradient would carry it past
`reduce_bucket_size` elements (`bucket.elements + param.ds_numel > self.reduce_bucket_size and bucket.elements >
0`) and once more at backward's end (`independent_gradient_partition_epilogue`). The flush,
`__reduce_and_partition_ipg_grads`, takes `__avg_scatter_grads` whenever `reduce_scatter` is on (the config's
default; the bucket's in-place all-reduce only without it), and runtime/comm/coalesced_collectives.py
`reduce_scatter_coalesced` concatenates every gradient's rank chunks, each padded to ceil(numel / world) elements,
into a new flat tensor (`torch.cat(tensor_partitions_lst_with_padding)`) before the reduce-scatter: a copy of the
whole bucket in the gradients' dtype (the communication dtype: the model's) beside the ipg bucket, which stays
allocated from the optimizer's init on. Only a bucket of one gradient that the world divides skips it
(`tensors[0].view(-1)`); one rank takes the same path (no shortcut for a world of one). The copy lives until the
partitions, views of it, are copied into the gradient partitions (`partition_grads`), inside the hook; it is
allocated on `reduce_and_partition_stream` (a stream of its own under `overlap_comm`, stage 3's default). The same
code in 0.8.3, 0.9.5, 0.12.6, 0.14.4 and 0.16.4.

What changes it: the HF integration's "auto" bucket (hidden² elements) is filled by one attention or MLP matrix
alone, reduce-scattered without a copy, so only small gradients flushed together are copied; `contiguous_gradients`
false drops the ipg buffer, not the copy (the gradients wait in `param.grad` for the flush); `overlap_comm` only
moves it to its own stream; `reduce_scatter` false (not read here: the default is assumed) all-reduces the bucket
in place, no copy.

`zero3_reduce_copies` replays the rule over the trainable gradients in backward's order: the largest copy made while
backward runs (a layer's gradients arriving, its activations and the checkpoints still live: step_phases.py counts it
at the recomputation moment) and the epilogue's (at backward's end). Real ZeRO-3 engines on the CPU, one and two
ranks, allocate exactly these bytes before each reduce-scatter (tests/estimate/test_zero3_reduce_copy.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.estimate.zero3_gathered import reduce_bucket_elements

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


@dataclass(frozen=True)
class ReduceCopies:
    """Bytes of ZeRO-3's flattened bucket copies (0 outside ZeRO-3)."""

    during: float = 0.0  # the largest copy of a bucket flushed while backward runs
    at_end: float = 0.0  # the copy of the bucket the epilogue flushes at backward's end
    bucket: float = 0.0  # reduce_bucket_size, elements

    @property
    def note(self) -> str:
        if not (self.during or self.at_end):
            return ""
        return (f"ZeRO-3 reduce-scatter: each flushed gradient bucket is copied flat first (coalesced_collectives.py "
                f"`reduce_scatter_coalesced`, torch.cat): {self.during / 2**30:.2f} GiB at most while backward runs, "
                f"{self.at_end / 2**30:.2f} GiB at its end (reduce_bucket_size {self.bucket:.3g} elements)")


def zero3_reduce_copies(workload: Workload, strategy: Strategy) -> ReduceCopies:
    """The flattened copies ZeRO-3's bucket flushes make, from DeepSpeed's flush rule (module docstring)."""
    if strategy.kind != "zero3":
        return ReduceCopies()
    bucket = reduce_bucket_elements(workload, strategy)
    during, at_end = _replay(_backward_gradients(workload), bucket, strategy.shard_degree)
    width = workload.compute_width  # the gradients' dtype, DeepSpeed's communication dtype (the model's)
    return ReduceCopies(width * during, width * at_end, bucket)


def _backward_gradients(workload: Workload) -> list[float]:
    """The trainable gradients' element counts in the order backward's hooks deliver them: forward's order
    reversed (a tied embedding last, its one gradient summed from both uses). LoRA: the adapters' A and B matrices,
    and the copies of the saved modules first (an LM head's)."""
    spec = workload.model
    if workload.regime == "full":
        return [float(spec.scaled(t.numel)) for t in reversed(list(spec.tensors()))]
    saved = [float(workload.saved_parameters)] if workload.saved_parameters else []
    return saved + [float(n) for n in reversed(workload.adapter_matrices)]


def _replay(gradients: list[float], bucket: float, world: int) -> tuple[float, float]:
    """Elements copied: (the largest flush while backward runs, the epilogue's flush)."""
    held: list[float] = []
    during = elements = 0.0
    for numel in gradients:
        if held and elements + numel > bucket:
            during = max(during, flattened_elements(held, world))
            held, elements = [], 0.0
        held.append(numel)
        elements += numel
    return during, flattened_elements(held, world)


def flattened_elements(gradients: list[float], world: int) -> float:
    """Elements `reduce_scatter_coalesced` concatenates for one flush: every gradient padded to a multiple of the
    world; none for a single gradient the world divides (it reduce-scatters a view of it)."""
    if not gradients or (len(gradients) == 1 and round(gradients[0]) % world == 0):
        return 0.0
    return float(sum(math.ceil(n / world) * world for n in gradients))
