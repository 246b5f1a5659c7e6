"""The trace's allocation stream replayed through the caching-allocator model (allocator.py).

trace.py records every allocation and free of the traced steps (and a marker at each phase); `replayed` runs
them through a fresh allocator and keeps the reserved bytes per phase, the allocated peaks and the timeline of
the second step (`--plot`); `scaled_replay` carries a shallower trace's reserve to the model's depth.
"""

from __future__ import annotations

from typing import Any

from accelwiz.estimate.allocator import replay

# trace.py's phases (it imports this module: its constants are not imported back, no cycle)
PHASES = ("forward", "backward", "optimizer")
Snapshot = Any  # trace.Snapshot: `.bytes` by category, `.total`


def scaled_replay(traced: dict[str, int], traced_phases: dict[str, Snapshot],
                   phases: dict[str, Snapshot]) -> dict[str, int]:
    """The replay of a shallower trace, scaled: reserved is not linear in depth (a segment is reused or
    not), so the traced ratio of reserved to allocated beyond the static bytes (parameters, buffers,
    optimizer states: allocated once, in segments of their own size) is applied to the scaled peaks."""

    def static(snapshot: Snapshot) -> int:
        return sum(snapshot.bytes.get(key, 0) for key in ("parameters", "buffers", "optimizer"))

    peak_phase = max(PHASES, key=lambda p: traced_phases[p].total)
    fixed, high = static(traced_phases[peak_phase]), traced_phases[peak_phase].total
    ratio = (traced["reserved"] - fixed) / (high - fixed) if high > fixed else 1.0
    scaled = {f"allocated_{p}": phases[p].total for p in PHASES}
    top = max(PHASES, key=lambda p: phases[p].total)
    scaled["allocated"] = phases[top].total
    base, dynamic = static(phases[top]), phases[top].total - static(phases[top])
    scaled["reserved"] = round(base + ratio * dynamic)
    if "reserved_expandable" in traced:  # the expandable replay's reserve, scaled the same way
        expandable = (traced["reserved_expandable"] - fixed) / (high - fixed) if high > fixed else 1.0
        scaled["reserved_expandable"] = round(base + expandable * dynamic)
    for phase in PHASES:
        share = traced.get(f"reserved_{phase}", 0) / traced["reserved"] if traced["reserved"] else 0.0
        scaled[f"reserved_{phase}"] = round(share * scaled["reserved"])
    return scaled


def replayed(events: list[tuple]) -> tuple[dict[str, int], tuple[tuple[str, int, int], ...]]:
    """The caching allocator's reserved bytes at the end of each phase (the most over both steps: reserved
    memory is only given back by `empty_cache`), and its allocated peak per phase (512-byte rounding and
    unsplit remainders included)."""
    result = replay(events, timeline=True)
    figures: dict[str, int] = {}
    for phase, allocated, reserved in result.phases:
        if phase in PHASES:
            figures[f"reserved_{phase}"] = max(figures.get(f"reserved_{phase}", 0), reserved)
            figures[f"allocated_{phase}"] = max(figures.get(f"allocated_{phase}", 0), allocated)
    figures["reserved"] = result.peak_reserved
    figures["allocated"] = result.peak_allocated
    # the same stream under `expandable_segments:True` (benchmarks/allocator_replay.py's second table)
    figures["reserved_expandable"] = replay(events, expandable_segments=True).peak_reserved
    return figures, second_step(result.timeline)


def second_step(points: tuple[tuple[str, int, int], ...], most: int = 1500) -> tuple[tuple[str, int, int], ...]:
    """The timeline of the second step (the one with optimizer states), at most `most` points: each kept point
    is the largest allocated of its stretch (a phase's stretches do not straddle phases)."""
    starts = [i for i, (phase, _, _) in enumerate(points)
              if phase == "forward" and (i == 0 or points[i - 1][0] != "forward")]
    step = points[starts[-1]:] if starts else points
    if len(step) <= most:
        return tuple(step)
    size = -(-len(step) // most)
    kept = []
    for start in range(0, len(step), size):
        chunk = step[start:start + size]
        kept.append(max(chunk, key=lambda point: point[1]))
    return tuple(kept)
