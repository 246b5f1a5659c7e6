"""The caching-allocator model against sequences whose outcome is computed by hand from
c10/cuda/CUDACachingAllocator.cpp's rules (allocator.py's docstring cites each)."""

from __future__ import annotations

import pytest

from accelwiz.estimate.allocator import CachingAllocator, OutOfMemory, allocation_size, replay, round_size

MIB = 2**20


@pytest.mark.parametrize(("size", "rounded"), [(1, 512), (512, 512), (513, 1024), (MIB + 1, MIB + 512)])
def test_round_size(size: int, rounded: int) -> None:
    assert round_size(size) == rounded


@pytest.mark.parametrize(
    ("size", "segment"),
    [(512, 2 * MIB), (MIB, 2 * MIB), (MIB + 512, 20 * MIB), (10 * MIB - 512, 20 * MIB), (10 * MIB, 10 * MIB),
     (11 * MIB + 1, 12 * MIB)],
)
def test_segment_sizes(size: int, segment: int) -> None:
    assert allocation_size(size) == segment


def test_small_requests_share_a_2mib_segment() -> None:
    allocator = CachingAllocator()
    allocator.malloc(1000)
    allocator.malloc(1000)
    assert (allocator.allocated, allocator.reserved, allocator.segments) == (2048, 2 * MIB, 1)
    allocator.malloc(MIB)  # 1 MiB is still small; 2 MiB - 2 KiB left is enough
    assert allocator.reserved == 2 * MIB
    allocator.malloc(MIB)  # now only 1 MiB - 2 KiB is left: a second small segment
    assert (allocator.reserved, allocator.segments) == (4 * MIB, 2)


def test_the_small_pool_counts_its_own_segments() -> None:
    """`reserved_bytes.small_pool`: only the 2 MiB segments of requests up to 1 MiB; released by empty_cache."""
    allocator = CachingAllocator()
    small = allocator.malloc(100 * 1024)
    large = allocator.malloc(5 * MIB)
    assert (allocator.small_reserved, allocator.reserved) == (2 * MIB, 22 * MIB)
    allocator.free(small)
    allocator.free(large)
    allocator.empty_cache()
    assert (allocator.small_reserved, allocator.peak_small_reserved, allocator.reserved) == (0, 2 * MIB, 0)
    assert replay([("alloc", 1, 512 * 1024, 0), ("alloc", 2, 600 * 1024, 0)]).peak_small_reserved == 2 * MIB


def test_mid_sized_requests_are_packed_into_20mib_segments() -> None:
    allocator = CachingAllocator()
    for _ in range(4):
        allocator.malloc(5 * MIB)
    assert (allocator.reserved, allocator.allocated) == (20 * MIB, 20 * MIB)
    allocator.malloc(5 * MIB)
    assert allocator.reserved == 40 * MIB


def test_an_unsplit_remainder_counts_as_allocated() -> None:
    allocator = CachingAllocator()
    allocator.malloc(11 * MIB)  # segment 12 MiB; 1 MiB left is not more than kSmallSize: no split
    assert (allocator.allocated, allocator.reserved, allocator.requested) == (12 * MIB, 12 * MIB, 11 * MIB)


def test_freed_segments_do_not_merge_across_segments() -> None:
    allocator = CachingAllocator()
    a, b = allocator.malloc(100 * MIB), allocator.malloc(100 * MIB)
    allocator.free(a)
    c = allocator.malloc(150 * MIB)  # the cached 100 MiB is too small: a third segment
    assert allocator.reserved == 350 * MIB
    for block in (b, c):
        allocator.free(block)
    allocator.malloc(200 * MIB)  # 100 + 100 + 150 cached, none holds 200: a fourth
    assert (allocator.reserved, allocator.peak_reserved, allocator.allocated) == (550 * MIB, 550 * MIB, 200 * MIB)


def test_best_fit_splits_and_merges_back() -> None:
    allocator = CachingAllocator()
    big, small = allocator.malloc(50 * MIB), allocator.malloc(30 * MIB)
    allocator.free(big)
    allocator.free(small)
    taken = allocator.malloc(25 * MIB)  # best fit: the 30 MiB block, split (5 MiB > 1 MiB left)
    assert (taken.size, allocator.reserved) == (25 * MIB, 80 * MIB)
    allocator.free(taken)  # merges with its 5 MiB remainder: the 30 MiB block is whole again
    again = allocator.malloc(30 * MIB)
    assert (again.size, allocator.reserved) == (30 * MIB, 80 * MIB)


def test_max_split_size_keeps_oversize_blocks_whole() -> None:
    allocator = CachingAllocator(max_split_size=64 * MIB)
    allocator.free(allocator.malloc(100 * MIB))
    allocator.malloc(30 * MIB)  # below max_split_size: the oversize cached block is not offered
    assert allocator.reserved == 130 * MIB
    taken = allocator.malloc(90 * MIB)  # within 20 MiB of the 100 MiB block: taken whole, not split
    assert (taken.size, allocator.allocated, allocator.reserved) == (100 * MIB, 130 * MIB, 130 * MIB)


def test_expandable_segments_grow_by_20mib_pages() -> None:
    allocator = CachingAllocator(expandable_segments=True)
    allocator.malloc(30 * MIB)  # two 20 MiB pages
    assert (allocator.reserved, allocator.allocated) == (40 * MIB, 30 * MIB)
    allocator.malloc(5 * MIB)  # split off the mapped 10 MiB tail
    assert allocator.reserved == 40 * MIB
    allocator.malloc(20 * MIB)  # 5 MiB free at the end, one page more
    assert (allocator.reserved, allocator.segments) == (60 * MIB, 1)


def test_capacity_releases_the_cache_before_running_out() -> None:
    allocator = CachingAllocator(capacity=100 * MIB)
    allocator.free(allocator.malloc(60 * MIB))
    allocator.malloc(70 * MIB)  # 60 + 70 > 100: the cached 60 MiB segment is released first
    assert (allocator.reserved, allocator.peak_reserved) == (70 * MIB, 70 * MIB)
    with pytest.raises(OutOfMemory):
        allocator.malloc(40 * MIB)


def test_replay_reports_each_phase() -> None:
    events = [
        ("phase", "forward"), ("alloc", "w", 40 * MIB), ("alloc", "act", 11 * MIB),
        ("phase", "backward"), ("free", "act"), ("alloc", "grad", 10 * MIB), ("free", "never-allocated"),
        ("phase", "optimizer"), ("alloc", "tmp", 3 * MIB), ("free", "tmp"),
    ]
    result = replay(events)
    # forward: 40 + 12 (11 MiB unsplit in its 12 MiB segment); backward: the grad takes the cached 12 MiB block,
    # split (2 MiB left); optimizer: the 2 MiB remainder is too small for 3 MiB: a new 20 MiB segment
    assert result.phases == (
        ("forward", 52 * MIB, 52 * MIB), ("backward", 52 * MIB, 52 * MIB), ("optimizer", 53 * MIB, 72 * MIB)
    )
    assert (result.peak_allocated, result.peak_reserved, result.peak_requested) == (53 * MIB, 72 * MIB, 53 * MIB)
