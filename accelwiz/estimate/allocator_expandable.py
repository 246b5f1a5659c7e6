"""The caching allocator's expandable segments (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`), the rules
allocator.py applies when they are on, read from c10/cuda/CUDACachingAllocator.cpp (Note [Expandable Segments]):

* one segment per pool and stream (`find_expandable_block` creates an `ExpandableSegment(device, stream,
  segment_size)` only when no unmapped range of that stream's pool has room), a virtual range of 1 1/8 the
  GPU's memory of which only the mapped pages are reserved;
* `try_allocate_expandable_block` maps the rounded request less the free block just before the unmapped rest
  (`allocatable(c->prev)`), and `ExpandableSegment::map` rounds the range up to whole pages of segment_size:
  kSmallBuffer (2 MiB) in the small pool, kLargeBuffer (20 MiB) in the large one;
* `get_free_block` ranks an expandable block by `expandable_size`, its size plus the unmapped range after it:
  the free tail of a segment counts as larger than the GPU, so the next larger cached block of the stream is
  split before it and the tail is kept for growing.

A block's `next` is None at the segment's mapped end here (c10 links the unmapped rest there).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from accelwiz.estimate.allocator_pool import Block, Pool

K_SMALL_PAGE = 2 << 20  # kSmallBuffer
K_LARGE_PAGE = 20 << 20  # kLargeBuffer


def best_fit(pool: Pool, block: Block, tail: Block | None) -> Block:
    """`get_free_block`'s `expandable_size` walk: past the free tail to the next larger block of its stream."""
    if block is not tail:
        return block
    index = bisect.bisect_right(pool.keys, (block.stream, block.size, block.ptr))
    if index < len(pool.keys) and pool.keys[index][0] == block.stream:
        return pool.blocks[pool.keys[index][2]]
    return block


def pages(size: int, small: bool, tail: Block | None) -> int:
    """The bytes to map at the segment's end so that its free last block holds `size` (whole pages)."""
    page = K_SMALL_PAGE if small else K_LARGE_PAGE
    free_tail = tail.size if tail is not None and not tail.allocated else 0
    return page * -(-(size - free_tail) // page)


def grow(pool: Pool, tail: Block | None, nbytes: int, small: bool, stream: int,
         new_segment: Callable[[], int]) -> Block:
    """Map `nbytes` at the end of the segment whose last block is `tail` (a new segment at `new_segment()` when
    None): merged into a free tail (`map_block`'s `try_merge_blocks`), else a new last block. The free block
    that holds the request, in `pool`; the segment's new last block."""
    if tail is not None and not tail.allocated:
        pool.remove(tail)
        tail.size += nbytes
        pool.insert(tail)
        return tail
    block = Block(nbytes, new_segment() if tail is None else tail.ptr + tail.size, small, stream)
    if tail is not None:
        tail.next, block.prev = block, tail
    pool.insert(block)
    return block
