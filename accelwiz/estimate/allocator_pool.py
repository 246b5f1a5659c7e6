"""The caching allocator's blocks and pools (allocator.py models its rules): a block is a piece of a segment,
linked to its neighbours in that segment; a pool holds the cached (free) blocks in the order of
c10/cuda/CUDACachingAllocator.cpp's `BlockComparatorSize` (stream, size, address)."""

from __future__ import annotations

import bisect


class Block:
    """A piece of a segment: `size` bytes at `ptr`, in use or cached; neighbours in the same segment."""

    __slots__ = ("allocated", "next", "prev", "ptr", "size", "small", "stream")

    def __init__(self, size: int, ptr: int, small: bool, stream: int = 0) -> None:
        self.size, self.ptr, self.small, self.stream = size, ptr, small, stream
        self.allocated = False
        self.prev: Block | None = None
        self.next: Block | None = None

    @property
    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


class Pool:
    """The cached (free) blocks of one pool, ordered by (stream, size, address) as `BlockComparatorSize`."""

    def __init__(self) -> None:
        self.keys: list[tuple[int, int, int]] = []
        self.blocks: dict[int, Block] = {}

    def insert(self, block: Block) -> None:
        bisect.insort(self.keys, (block.stream, block.size, block.ptr))
        self.blocks[block.ptr] = block

    def remove(self, block: Block) -> None:
        index = bisect.bisect_left(self.keys, (block.stream, block.size, block.ptr))
        del self.keys[index]
        del self.blocks[block.ptr]

    def lower_bound(self, stream: int, size: int) -> Block | None:
        """`get_free_block`'s `pool.blocks.lower_bound(&search_key)`: a block of another stream is not offered."""
        index = bisect.bisect_left(self.keys, (stream, size, -1))
        if index == len(self.keys) or self.keys[index][0] != stream:
            return None
        return self.blocks[self.keys[index][2]]
