"""A caching allocator's own recorded event stream, as replay events for allocator.py.

PyTorch records what its CUDA caching allocator does once history is on:

    torch.cuda.memory._record_memory_history(context=None)   # before the first CUDA tensor
    ...                                                        # the training steps
    torch.cuda.memory._dump_snapshot("snapshot.pickle")        # or: torch.cuda.memory._snapshot()

The snapshot's `device_traces[device]` is a list of TraceEntry dicts (torch/cuda/memory.py, `_snapshot`'s
docstring) whose `action`, `addr`, `size` and `stream` are what the replay needs: `alloc` (size as requested),
`free_requested`, `free_completed` (the block is back in the cache; later than the request when the tensor was
used on another stream), `segment_alloc` / `segment_free` (cudaMalloc / cudaFree), `segment_map` /
`segment_unmap` (expandable segments), `oom`, `snapshot`, `user_defined`. benchmarks/gpu_step.py stores the
same entries as JSON lines `[action, addr, size, stream]` (tests/fixtures/allocator_streams).

A stream recorded from the process's first CUDA allocation is complete: summing its segment events gives
`torch.cuda.max_memory_reserved` exactly. Recording started later misses the blocks made before; their frees
are skipped by `replay` and their segments are not in the model.
"""

from __future__ import annotations

import gzip
import json
import pickle
from collections.abc import Iterable
from pathlib import Path

from accelwiz.errors import InputError

_RELEASES = ("segment_free", "segment_unmap")


def events_from_history(entries: Iterable, *, addresses: bool = True) -> list[tuple]:
    """Replay events (allocator.replay) from TraceEntry dicts or `[action, addr, size, stream]` lists.

    `alloc` and `free_completed` become ("alloc", addr, size, stream) and ("free", addr). The first of each run
    of segment_free / segment_unmap entries becomes ("empty_cache",): only `release_cached_blocks`
    (`torch.cuda.empty_cache`, or malloc's retry after a failed cudaMalloc) and `release_available_cached_blocks`
    (max_split_size set) give memory back, and they release a run of segments at once. With `addresses`, each
    segment_alloc becomes ("segment", addr, size, stream): the address cudaMalloc returned, which orders equal
    cached blocks in the model as it did in the run."""
    events: list[tuple] = []
    releasing = False
    for entry in entries:
        action, addr, size, stream = _fields(entry)
        if action == "alloc":
            events.append(("alloc", addr, size, stream))
        elif action == "free_completed":
            events.append(("free", addr))
        elif action == "segment_alloc" and addresses:
            events.append(("segment", addr, size, stream))
        elif action in _RELEASES and not releasing:
            events.append(("empty_cache",))
        releasing = action in _RELEASES
    return events


def read_history(path: Path, device: int = 0) -> list:
    """The trace entries of `device` from a `_dump_snapshot` pickle or a `.jsonl` / `.jsonl.gz` of lists."""
    name = path.name
    try:
        if name.endswith((".jsonl", ".jsonl.gz")):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt") as lines:
                return [json.loads(line) for line in lines if line.strip()]
        with path.open("rb") as handle:
            snapshot = _PlainUnpickler(handle).load()
    except (OSError, EOFError, ValueError, pickle.UnpicklingError) as error:
        raise InputError(f"cannot read the allocator history {path}: {error}",
                         hint="pass a torch.cuda.memory._dump_snapshot pickle or a .jsonl(.gz) of "
                              "[action, addr, size, stream] lists") from error
    traces = snapshot.get("device_traces") if isinstance(snapshot, dict) else None
    if not isinstance(traces, list) or not 0 <= device < len(traces):
        raise InputError(f"{path} has no device_traces for device {device}",
                         hint="record with torch.cuda.memory._record_memory_history() before the first "
                              "allocation, then torch.cuda.memory._dump_snapshot(path)")
    return traces[device]


def _fields(entry: object) -> tuple[str, int, int, int]:
    if isinstance(entry, dict):
        return entry["action"], entry["addr"], entry["size"], entry.get("stream", 0)
    action, addr, size, stream = entry  # type: ignore[misc]
    return action, addr, size, stream


class _PlainUnpickler(pickle.Unpickler):
    """A snapshot is dicts, lists, strings and numbers: refuse any class, so a pickle cannot run code."""

    def find_class(self, module: str, name: str) -> object:
        raise pickle.UnpicklingError(f"unexpected object {module}.{name} in a memory snapshot")
