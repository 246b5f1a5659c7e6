"""ZeRO-3 without zero.Init, parameters offloaded: loading's blocks stay reserved, and ZeRO-3's own streams beside.

Without zero.Init the engine moves the whole 16-bit model to the GPU and ZeRO-3 partitions it there (loading.py):
each parameter's block goes back to the caching allocator's cache. Whether that cache lasts into training depends
on where the partitions live (DeepSpeed stage3.py `_create_fp16_partitions_with_defragmentation`, 0.9.0 and 0.19.8
alike): with them on the GPU, `defragment` (runtime/zero/utils.py) copies them through host memory into one flat
buffer and calls `empty_cache()` first, giving loading's blocks back; with `offload_param` that branch is skipped
and nothing else empties the cache, so the whole model stays reserved while it trains (a real engine on the CPU:
tests/estimate/test_zero3_loading_cache.py counts the calls).

The step is cut from those blocks only where it allocates on the stream that freed them: the caching allocator
gives a cached block to a request of the same stream only (c10 CUDACachingAllocator `get_free_block`, `(*it)->stream
!= p.stream()`: allocator.py models it). ZeRO-3 gathers parameters on a stream of its own
(partitioned_param_coordinator.py `__all_gather_params`, `with get_accelerator().stream(self.__allgather_stream)`;
parameter_offload.py makes it a new stream where `overlap_comm` is on, stage 3's default), so the gathered
parameters' pool is reserved beside loading's cache. The reduce bucket, allocated on the default stream once the
model is partitioned (stage3.py `__init__`), is cut from a freed block only where one parameter is at least its size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.reserve import at_least_loading
from accelwiz.estimate.zero3_gathered import reduce_bucket_elements, zero3_gathered_buffer_bytes, zero3_kept_bytes
from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def keeps_loading_cache(strategy: Strategy) -> bool:
    """ZeRO-3 building its model outside zero.Init with the parameters offloaded: loading's blocks stay cached."""
    return strategy.kind == "zero3" and not strategy.zero_init and strategy.offload_param != "none"


def reserved_beside_loading(workload: Workload, strategy: Strategy, step_reserved: float, notes: list[str],
                            loading: float, warmup: str | None = None) -> tuple[float, list[str]]:
    """The reserved peak once loading's blocks are counted (`reserve.at_least_loading` where they are given back
    or were never the whole model). Where they stay cached: the larger of them and the default stream's share of
    the step, plus the gathered parameters' pool and the reduce bucket where no parameter's block holds it."""
    if not keeps_loading_cache(strategy) or warmup:
        return at_least_loading(step_reserved, notes, loading, warmup)
    width = workload.compute_width
    gathered = zero3_gathered_buffer_bytes(workload, strategy) + zero3_kept_bytes(workload, strategy)[1]
    bucket = width * reduce_bucket_elements(workload, strategy)
    spec = workload.model
    largest = width * spec.scaled(max(t.numel for t in spec.tensors()))
    held = largest >= bucket  # the bucket cut from the largest parameter's freed block
    default = max(0.0, step_reserved - gathered - bucket)
    reserved = max(loading, default + (bucket if held else 0.0)) + gathered + (0.0 if held else bucket)
    reserved = max(reserved, step_reserved)
    bucket_said = ("cut from the largest parameter's freed block" if held else
                   f"a segment of its own (no parameter's block is {bucket / GIB:.2f} GiB)")
    return reserved, [*notes, (
        f"allocator reserve: loading's {loading / GIB:.2f} GiB stay reserved (offload_param: DeepSpeed never "
        f"empties the cache, stage3.py defragments only partitions kept on the GPU); ZeRO-3's gathered parameters "
        f"({gathered / GIB:.2f} GiB) are allocated on its allgather stream and never cut from them; the reduce "
        f"bucket {bucket_said}; the rest of the step's reserve ({default / GIB:.2f} GiB) is cut from them")]
