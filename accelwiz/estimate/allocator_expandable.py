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

* `release_blocks` (`empty_cache`, or malloc's retry at the capacity) unmaps the whole pages of every free block
  (`unmap_block`, `ExpandableSegment::unmap`), not only wholly free segments; `find_expandable_block` then starts
  at the lowest unmapped range whose run of free and unmapped blocks holds the request (the free block before it
  included) and maps only what the run lacks.

A block's `next` is None at the segment's mapped end here (c10 links the unmapped rest there); an unmapped range
inside a segment is an `Unmapped` block.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from accelwiz.estimate.allocator_pool import Block, Pool

K_SMALL_PAGE = 2 << 20  # kSmallBuffer
K_LARGE_PAGE = 20 << 20  # kLargeBuffer
# the address space after a segment's mapped end: 1 1/8 the GPU's memory less what is mapped (any GPU: beyond a block)
_ADDRESS_SPACE = 1 << 50


def page(small: bool) -> int:
    """`ExpandableSegment`'s segment_size: the page it maps and unmaps."""
    return K_SMALL_PAGE if small else K_LARGE_PAGE


def best_fit(pool: Pool, block: Block, tail: Block | None) -> Block:
    """`get_free_block`'s walk: from the smallest fit, on to the next larger block of the stream while its
    `expandable_size` (its size plus the unmapped range after it) is smaller; the free block at a segment's mapped
    end has the rest of the address space after it."""

    def expandable_size(found: Block) -> int:
        if found is tail:
            return found.size + _ADDRESS_SPACE
        return found.size + (found.next.size if isinstance(found.next, Unmapped) else 0)

    index = bisect.bisect_left(pool.keys, (block.stream, block.size, block.ptr))
    while index + 1 < len(pool.keys) and pool.keys[index + 1][0] == block.stream:
        larger = pool.blocks[pool.keys[index + 1][2]]
        if expandable_size(larger) >= expandable_size(block):
            break
        block, index = larger, index + 1
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


# -- release_blocks: the free pages of a segment in use unmapped, and mapped again ---------------------------------


class Unmapped(Block):
    """A range of a segment whose pages `release_blocks` unmapped (`unmap_block`): address space, no memory. It is
    never in a pool and never merges with a mapped block (`try_merge_blocks` requires `dst->mapped ==
    src->mapped`): `allocated` stays True so that `free`'s merge passes it by."""

    __slots__ = ()

    def __init__(self, size: int, ptr: int, small: bool, stream: int) -> None:
        super().__init__(size, ptr, small, stream)
        self.allocated = True


def _allocatable(block: Block) -> bool:
    return isinstance(block, Unmapped) or not block.allocated


def _blocks(tail: Block) -> list[Block]:
    """The segment's blocks in address order (its mapped end is `tail`; the unmapped rest after it is implicit)."""
    first = tail
    while first.prev is not None:
        first = first.prev
    found = []
    while first is not None:
        found.append(first)
        first = first.next
    return found


def _link(block: Block, prev: Block | None, after: Block | None) -> None:
    block.prev, block.next = prev, after
    if prev is not None:
        prev.next = block
    if after is not None:
        after.prev = block


def unmap(pool: Pool, block: Block, page: int, tail: Block) -> tuple[int, Block | None]:
    """`unmap_block` of a free block: its whole pages (`ExpandableSegment::unmap`: from the first page boundary in
    it to the last) become unmapped, the pieces before and after stay free. (Bytes unmapped, the segment's new
    last mapped block; None when nothing is left mapped: `release_expandable_segment`.)"""
    base = _blocks(tail)[0].ptr
    begin = base + -(-(block.ptr - base) // page) * page
    end = base + (block.ptr + block.size - base) // page * page
    if begin >= end:
        return 0, tail
    pool.remove(block)
    prev, after = block.prev, block.next
    if begin > block.ptr:
        prev = Block(begin - block.ptr, block.ptr, block.small, block.stream)
        _link(prev, block.prev, block)
        pool.insert(prev)
    if end < block.ptr + block.size:
        after = Block(block.ptr + block.size - end, end, block.small, block.stream)
        _link(after, block, block.next)
        pool.insert(after)
        tail = after if tail is block else tail
    hole = Unmapped(end - begin, begin, block.small, block.stream)
    _link(hole, prev, after)
    for other in (prev, after):  # merged with unmapped neighbours
        if isinstance(other, Unmapped):
            first, second = (other, hole) if other is prev else (hole, other)
            first.size += second.size
            _link(first, first.prev, second.next)
            hole = first
    if hole.next is None:  # at the mapped end: back into the unmapped rest
        if hole.prev is not None:
            hole.prev.next = None
        tail = hole.prev
    return end - begin, tail


def placement(tail: Block | None, size: int, page: int) -> tuple[Block | None, int]:
    """`find_expandable_block` then `try_allocate_expandable_block`'s mapping: the first unmapped range by address
    (with the free block before it) whose run of free and unmapped blocks holds `size`, the unmapped rest after the
    segment's end counting as unbounded; (the block the request starts at, None for the end; the bytes mapped)."""
    for block in _blocks(tail) if tail is not None else ():
        if not isinstance(block, Unmapped):
            continue
        start = block.prev if block.prev is not None and not block.prev.allocated else block
        run, have, mapped = start, 0, 0
        while run is not None and _allocatable(run) and have < size:
            step = min(run.size, page * -(-(size - have) // page)) if isinstance(run, Unmapped) else run.size
            have, mapped = have + step, mapped + (step if isinstance(run, Unmapped) else 0)
            run = run.next
        if have < size and run is None:  # into the unmapped rest
            mapped += page * -(-(size - have) // page)
            have = size
        if have >= size:
            return start, mapped
    return None, pages(size, page == K_SMALL_PAGE, tail)


def map_run(pool: Pool, start: Block, size: int, page: int) -> Block:
    """`try_allocate_expandable_block` from `placement`'s start: its unmapped ranges mapped (`map_block`) until
    its first block holds `size`; that block, free, in `pool`. Smaller than `size` only where the run reaches the
    segment's mapped end (the rest is mapped there, `grow`)."""
    block = start
    if isinstance(block, Unmapped):
        block = _map(pool, block, min(block.size, page * -(-size // page)))
    while block.size < size and isinstance(block.next, Unmapped):
        block = _map(pool, block.next, min(block.next.size, page * -(-(size - block.size) // page)))
    return block


def _map(pool: Pool, hole: Block, nbytes: int) -> Block:
    """`map_block`: the first `nbytes` of `hole` mapped, merged with a free block on either side."""
    mapped = Block(nbytes, hole.ptr, hole.small, hole.stream)
    if nbytes < hole.size:
        hole.ptr, hole.size = hole.ptr + nbytes, hole.size - nbytes
        _link(mapped, hole.prev, hole)
    else:
        _link(mapped, hole.prev, hole.next)
    for other in (mapped.prev, mapped.next):
        if other is not None and not other.allocated:
            pool.remove(other)
            first, second = (other, mapped) if other is mapped.prev else (mapped, other)
            first.size += second.size
            _link(first, first.prev, second.next)
            mapped = first
    pool.insert(mapped)
    return mapped


def release(pools: tuple[Pool, ...], tails: dict[tuple[bool, int], Block]) -> tuple[int, int, int]:
    """`release_blocks` with expandable segments: every free block's whole pages unmapped (`unmap_block`), a
    segment left with nothing mapped released; `tails` (each segment's mapped end) kept. (Bytes unmapped, of them
    the small pool's, segments released.)"""
    freed = small = released = 0
    for pool in pools:
        for block in list(pool.blocks.values()):
            key = (block.small, block.stream)
            gone, tail = unmap(pool, block, page(block.small), tails[key])
            freed, small = freed + gone, small + (gone if block.small else 0)
            if tail is None:
                del tails[key]
                released += 1
            else:
                tails[key] = tail
    return freed, small, released
