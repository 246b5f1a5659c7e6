"""PyTorch's CUDA caching allocator, modelled in Python: what `torch.cuda.max_memory_reserved` will show.

`torch.cuda.max_memory_allocated` counts the tensors; what runs out is what the caching allocator has taken
from the driver (`reserved`), which is larger: requests are rounded, small ones are packed into 2 MiB
segments, 1-10 MiB ones into 20 MiB segments, and a freed block stays cached for a later request of at most
its size on the same stream. Replaying the allocations and frees of a training step (recorded by the
fake-tensor trace, trace.py, or by the real allocator, allocator_stream.py) through this model gives the
reserved peak the real allocator reaches. On 15 real runs (an H200, docs/performance.md "Checked against a
real allocator") it gives every block the address the real allocator chose, and both peaks to the byte.

Every rule below is read from c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch, the `Native` allocator):

* `round_size`: requests round up to a multiple of kMinBlockSize = 512 bytes (at least 512);
  `roundup_power2_divisions` is off by default and not modelled.
* `get_pool`: a rounded size <= kSmallSize = 1 MiB goes to the small pool, else to the large pool.
* `get_allocation_size` (a new segment, `cudaMalloc`): kSmallBuffer = 2 MiB for the small pool; kLargeBuffer
  = 20 MiB for sizes below kMinLargeAlloc = 10 MiB; above, the size rounded up to kRoundLarge = 2 MiB.
* Streams: a block belongs to the stream that allocated it (`Block::stream`) and, cached, is offered only to
  requests on that stream: `BlockComparatorSize` orders a pool by stream, then size, then address, and
  `get_free_block` stops at the first block of another stream. Expandable segments are per pool and stream.
* `get_free_block`: best fit, the smallest cached block of at least the size (ties: the lowest address);
  with `max_split_size` set, a request below it never takes a block of at least it, and a request of at
  least it takes a block only within kLargeBuffer (20 MiB) of its size.
* `should_split`: a small-pool block (or any block with expandable segments) splits when at least 512 bytes
  remain; a large-pool block when the size is below `max_split_size` and more than kSmallSize (1 MiB)
  remains. An unsplit block counts whole in `allocated_bytes` (`alloc_found_block` adds `block->size`).
* `free_block` / `try_merge_blocks`: a freed block merges with its free neighbours in the same segment.
* `emptyCache` -> `release_cached_blocks` -> `release_blocks`: every cached block with no neighbour (a
  segment never split, or whose blocks all merged back) is cudaFree'd, on every stream (with expandable segments
  every free block's whole pages are unmapped).
* `alloc_block` failing at the capacity: `release_available_cached_blocks` (oversize blocks, only with
  `max_split_size`), then `release_cached_blocks` and retry.
* expandable segments (`expandable_segments:True`): allocator_expandable.py (one segment per pool and stream
  growing by pages at its end); `should_split` then splits any block down to 512 bytes.

Not modelled: `record_stream` delays (a recorded stream's `free_completed` already carries them), CUDA graphs'
private pools, garbage_collection_threshold.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from accelwiz.estimate import allocator_expandable as expandable
from accelwiz.estimate.allocator_pool import Block, Pool

K_MIN_BLOCK_SIZE = 512  # kMinBlockSize
K_SMALL_SIZE = 1 << 20  # kSmallSize: the largest small-pool request, 1 MiB
K_SMALL_BUFFER = 2 << 20  # kSmallBuffer: a small-pool segment, 2 MiB
K_LARGE_BUFFER = 20 << 20  # kLargeBuffer: the segment of a 1-10 MiB request, 20 MiB
K_MIN_LARGE_ALLOC = 10 << 20  # kMinLargeAlloc: from here a segment is the request rounded to 2 MiB
K_ROUND_LARGE = 2 << 20  # kRoundLarge
NO_LIMIT = 1 << 62  # max_split_size's default: SIZE_MAX (never limited)


class OutOfMemory(Exception):
    """The request does not fit under the capacity even after the cache was released."""


def round_size(size: int) -> int:
    """`round_size`: up to a multiple of 512 bytes, at least 512."""
    if size < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    return K_MIN_BLOCK_SIZE * ((size + K_MIN_BLOCK_SIZE - 1) // K_MIN_BLOCK_SIZE)


def allocation_size(size: int) -> int:
    """`get_allocation_size`: the segment `cudaMalloc` gets for a rounded request with no cached block."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)


@dataclass
class CachingAllocator:
    """One device's caching allocator, all streams; sizes in bytes, `capacity` None for an unbounded GPU."""

    max_split_size: int = NO_LIMIT
    expandable_segments: bool = False
    capacity: int | None = None
    allocated: int = 0  # `allocated_bytes`: the blocks handed out (rounded, unsplit remainders included)
    reserved: int = 0  # `reserved_bytes`: the segments taken from the driver
    requested: int = 0  # `requested_bytes`: what the callers asked for
    peak_allocated: int = 0
    peak_reserved: int = 0
    # `reserved_bytes.small_pool`: the 2 MiB segments of requests up to 1 MiB, which large requests never use
    small_reserved: int = 0
    peak_small_reserved: int = 0
    segments: int = 0
    # The address the driver gave the next segment, (ptr, size, stream), where a recorded stream says so;
    # `_new_block` takes it if it makes that segment, else the next of `_next_ptr`.
    hint: tuple[int, int, int] | None = None
    _small: Pool = field(default_factory=Pool)
    _large: Pool = field(default_factory=Pool)
    # Where no address is recorded, each new segment lies below the last: the addresses cudaMalloc returned
    # on the H200 (tests/fixtures/allocator_streams) mostly decrease, and `BlockComparatorSize` breaks a tie
    # between equal cached blocks by address, so the order decides which of them a request splits.
    _next_ptr: itertools.count = field(default_factory=lambda: itertools.count(1 << 60, -(1 << 40)))
    _hinted: dict[int, int] = field(default_factory=dict)  # segments placed at a hinted address: ptr -> size
    _tail: dict[tuple[bool, int], Block] = field(default_factory=dict)  # expandable: (small, stream) -> last

    def malloc(self, nbytes: int, stream: int = 0) -> Block:
        """`DeviceCachingAllocator::malloc` for `nbytes` on `stream`; the block to pass to `free`."""
        size = round_size(nbytes)
        small = size <= K_SMALL_SIZE
        pool = self._small if small else self._large
        block = self._free_block(pool, size, stream) or self._new_block(pool, size, small, stream)
        pool.remove(block)
        if self._should_split(block, size):
            rest = Block(block.size - size, block.ptr + size, small, stream)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            elif self.expandable_segments and self._tail.get((small, stream)) is block:
                self._tail[small, stream] = rest
            block.next, block.size = rest, size
            pool.insert(rest)
        block.allocated = True
        self.allocated += block.size
        self.requested += nbytes
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def free(self, block: Block, nbytes: int = 0) -> None:
        """`free_block`: back to its pool, merged with free neighbours (`try_merge_blocks`)."""
        block.allocated = False
        self.allocated -= block.size
        self.requested -= nbytes
        pool = self._small if block.small else self._large
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated:
                pool.remove(neighbour)
                if neighbour is block.prev:
                    block.ptr, block.prev = neighbour.ptr, neighbour.prev
                    if block.prev is not None:
                        block.prev.next = block
                else:
                    block.next = neighbour.next
                    if block.next is not None:
                        block.next.prev = block
                    if self._tail.get((block.small, block.stream)) is neighbour:
                        self._tail[block.small, block.stream] = block
                block.size += neighbour.size
        pool.insert(block)

    def empty_cache(self) -> None:
        """`emptyCache` -> `release_cached_blocks` -> `release_blocks`: every cached block with no neighbour (a
        whole segment: never split, or all of its blocks merged back) goes back to the driver, on every stream."""
        if self.expandable_segments:  # every free block's whole pages unmapped (allocator_expandable.py)
            freed, small, released = expandable.release((self._small, self._large), self._tail)
            self.reserved, self.small_reserved, self.segments = (self.reserved - freed, self.small_reserved - small,
                                                                 self.segments - released)
            return
        for pool in (self._small, self._large):
            for block in [b for b in pool.blocks.values() if not b.is_split]:
                pool.remove(block)
                self.reserved -= block.size
                self.small_reserved -= block.size if block.small else 0
                self.segments -= 1
                self._hinted.pop(block.ptr, None)
                if self._tail.get((block.small, block.stream)) is block:
                    del self._tail[block.small, block.stream]

    # -- the rules -----------------------------------------------------------------------------------------

    def _should_split(self, block: Block, size: int) -> bool:
        remaining = block.size - size
        if block.small or self.expandable_segments:
            return remaining >= K_MIN_BLOCK_SIZE
        return size < self.max_split_size and remaining > K_SMALL_SIZE

    def _free_block(self, pool: Pool, size: int, stream: int) -> Block | None:
        block = pool.lower_bound(stream, size)
        if block is None:
            return None
        if self.expandable_segments:
            block = expandable.best_fit(pool, block, self._tail.get((block.small, stream)))
        if size < self.max_split_size <= block.size:
            return None  # an oversize block is not split for a smaller request
        if size >= self.max_split_size and block.size >= size + K_LARGE_BUFFER:
            return None
        return block

    def _new_block(self, pool: Pool, size: int, small: bool, stream: int) -> Block:
        """`alloc_block`, releasing the cache and retrying once at the capacity, as `malloc` does."""
        grow = self._expansion(size, small, stream) if self.expandable_segments else allocation_size(size)
        if self.capacity is not None and self.reserved + grow > self.capacity:
            self.empty_cache()
            grow = self._expansion(size, small, stream) if self.expandable_segments else allocation_size(size)
            if self.reserved + grow > self.capacity:
                raise OutOfMemory(f"{size} bytes requested with {self.reserved} reserved of {self.capacity}")
        self.reserved += grow
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        if small:
            self.small_reserved += grow
            self.peak_small_reserved = max(self.peak_small_reserved, self.small_reserved)
        if self.expandable_segments:
            return self._expand(pool, size, small, stream)
        self.segments += 1
        block = Block(grow, self._address(grow, stream), small, stream)
        pool.insert(block)
        return block

    def _address(self, size: int, stream: int) -> int:
        """The hinted address if it is for this segment and no live hinted segment overlaps it."""
        hint, self.hint = self.hint, None
        if hint is not None and hint[1:] == (size, stream) and all(
                hint[0] + size <= ptr or ptr + length <= hint[0] for ptr, length in self._hinted.items()):
            self._hinted[hint[0]] = size
            return hint[0]
        return next(self._next_ptr)

    def _expansion(self, size: int, small: bool, stream: int) -> int:
        return expandable.placement(self._tail.get((small, stream)), size, expandable.page(small))[1]

    def _expand(self, pool: Pool, size: int, small: bool, stream: int) -> Block:
        """The free block that holds `size`: unmapped ranges mapped again where one has room, else pages mapped
        at the segment's end (a new segment where the stream's pool has none)."""
        tail = self._tail.get((small, stream))
        start = expandable.placement(tail, size, expandable.page(small))[0]
        if start is not None:
            block = expandable.map_run(pool, start, size, expandable.page(small))
            if block.next is None:  # merged into the mapped end
                self._tail[small, stream] = tail = block
            if block.size >= size:
                return block
        self.segments += tail is None
        block = expandable.grow(pool, tail, expandable.pages(size, small, tail), small, stream,
                                lambda: next(self._next_ptr))
        self._tail[small, stream] = block
        return block


# -- replaying a recorded stream -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replay:
    """The allocator's peaks over a stream, overall and per phase (the phases the stream marks)."""

    peak_allocated: int
    peak_reserved: int
    peak_requested: int
    phases: tuple[tuple[str, int, int], ...]  # (phase, peak allocated, reserved at its end), in stream order
    timeline: tuple[tuple[str, int, int], ...] = ()  # (phase, allocated, reserved) after each event, if asked
    peak_small_reserved: int = 0  # the small pool's segments at their most (`reserved_bytes.small_pool.peak`)

    @property
    def ratio(self) -> float:
        """Reserved over requested peak: what the analytic path multiplies its tensor bytes by."""
        return self.peak_reserved / self.peak_requested if self.peak_requested else 1.0


# An event: ("alloc", key, nbytes) or ("alloc", key, nbytes, stream) (stream 0 when left out), ("free", key),
# ("empty_cache",), ("phase", name), or ("segment", ptr, size, stream): the address cudaMalloc gave the segment
# that the next alloc makes (a recorded stream has it; it only orders equal cached blocks, see `_next_ptr`).
Event = tuple


def replay(events: Iterable[Event], *, max_split_size: int = NO_LIMIT, expandable_segments: bool = False,
           capacity: int | None = None, timeline: bool = False) -> Replay:
    """Run `events` through a fresh allocator; a free of an unknown key (allocated before the stream) is skipped.
    `timeline`: also keep (phase, allocated, reserved) after every allocation and free."""
    allocator = CachingAllocator(max_split_size, expandable_segments, capacity)
    live: dict[object, tuple[Block, int]] = {}
    phases: list[list] = []
    points: list[tuple[str, int, int]] = []
    peak_requested = 0
    for event in events:
        kind = event[0]
        if kind == "alloc":
            if event[2] > 0:
                live[event[1]] = (allocator.malloc(event[2], event[3] if len(event) > 3 else 0), event[2])
                peak_requested = max(peak_requested, allocator.requested)
            allocator.hint = None
        elif kind == "free":
            found = live.pop(event[1], None)
            if found is not None:
                allocator.free(*found)
        elif kind == "segment":
            allocator.hint = (event[1], event[2], event[3])
        elif kind == "empty_cache":
            allocator.empty_cache()
        elif kind == "phase":
            phases.append([event[1], allocator.allocated, allocator.reserved])
        if phases and kind == "alloc":
            phases[-1][1] = max(phases[-1][1], allocator.allocated)
        if phases:
            phases[-1][2] = allocator.reserved
        if timeline and kind in ("alloc", "free"):
            points.append((phases[-1][0] if phases else "", allocator.allocated, allocator.reserved))
    return Replay(allocator.peak_allocated, allocator.peak_reserved, peak_requested,
                  tuple((name, high, reserved) for name, high, reserved in phases), tuple(points),
                  allocator.peak_small_reserved)
