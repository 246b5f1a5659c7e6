"""A tiny all-reduce across the nodes, one process each, over the preflight's store: gloo on CPUs, NCCL when
every node has a GPU and a CUDA build of torch. It proves the collective backend can connect the nodes (the
step that hangs when an interface or a firewall is wrong) and gives a first bandwidth number.

It runs in a daemon thread so that a collective that never completes cannot hold the node past its deadline.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

from accelwiz.doctor.exchange import first_line
from accelwiz.doctor.model import AllReduceResult

SIZE_BYTES = 4 * 2**20  # large enough to measure a rate, small enough for a slow link in a few seconds
ITERATIONS = 5


def run_allreduce(store: Any, rank: int, nodes: int, *, nccl: bool, timeout: float) -> AllReduceResult:
    """The result on this node; an error (not an exception) when it fails or does not finish in `timeout` s."""
    backend = "nccl" if nccl else "gloo"
    outcome: list[AllReduceResult] = []

    def work() -> None:
        try:
            outcome.append(_measure(store, rank, nodes, backend, timeout))
        except Exception as exc:  # noqa: BLE001 - any backend failure is the finding itself
            outcome.append(AllReduceResult(backend=backend, error=f"{type(exc).__name__}: {first_line(exc)}"))

    thread = threading.Thread(target=work, name="accelwiz-allreduce", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        return AllReduceResult(backend=backend, error=f"did not finish within {timeout:.0f} s")
    return outcome[0]


def _measure(store: Any, rank: int, nodes: int, backend: str, timeout: float) -> AllReduceResult:
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", 0) if backend == "nccl" else torch.device("cpu")
    # The store was opened with what was left of the join deadline; the backend's connection setup waits on it.
    store.set_timeout(timedelta(seconds=timeout))
    dist.init_process_group(backend, store=dist.PrefixStore("accelwiz-allreduce", store), rank=rank,
                            world_size=nodes, timeout=timedelta(seconds=timeout))
    try:
        # Correctness first: every rank contributes rank + 1, so the sum is known.
        probe = torch.full((8,), float(rank + 1), device=device)
        dist.all_reduce(probe)
        expected = nodes * (nodes + 1) / 2
        if not torch.all(probe == expected):
            return AllReduceResult(backend=backend, error=f"wrong sum: {probe[0].item():g}, expected {expected:g}")
        tensor = torch.ones(SIZE_BYTES // 4, dtype=torch.float32, device=device)
        _synchronize(torch, device)
        start = time.perf_counter()
        for _ in range(ITERATIONS):
            dist.all_reduce(tensor)
        _synchronize(torch, device)
        seconds = time.perf_counter() - start
    finally:
        dist.destroy_process_group()
    # nccl-tests' bus bandwidth for all-reduce (doc/PERFORMANCE.md): algorithm bandwidth x 2(n-1)/n, the rate
    # each link carries, comparable across node counts.
    bus = SIZE_BYTES * ITERATIONS / seconds * 2 * (nodes - 1) / nodes / 1e9
    return AllReduceResult(backend=backend, size_bytes=SIZE_BYTES, iterations=ITERATIONS, seconds=round(seconds, 4),
                           bus_bandwidth_gbps=round(bus, 3))


def _synchronize(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)

