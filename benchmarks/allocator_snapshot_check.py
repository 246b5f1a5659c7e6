"""On a GPU: record a real `torch.cuda.memory._dump_snapshot` pickle for tests/fixtures/allocator_streams.

A small two-stream workload (an MLP trained on the default stream; a side stream that allocates its own
buffers; `torch.cuda.empty_cache()` after each step) with the allocator's history on from the first CUDA
allocation. Writes OUT/snapshot.pickle and OUT/real.json (the real max_memory_reserved / allocated);
tests/estimate/test_allocator_real_streams.py reads the pickle with allocator_stream.read_history and replays
it. Recorded on an NVIDIA H200, torch 2.11.0+cu130 (snapshot_two_streams.*).

    python benchmarks/allocator_snapshot_check.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    import torch

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.cuda.memory._record_memory_history(context=None, max_entries=1_000_000)
    model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    side = torch.cuda.Stream()
    for step in range(3):
        with torch.cuda.stream(side):
            staged = [torch.empty((3 << 20) + step * 4096, dtype=torch.uint8, device="cuda") for _ in range(8)]
        side.synchronize()
        loss = model(torch.randn(64 * (step + 1), 4096, device="cuda")).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        del staged
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    real = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
            "max_reserved": torch.cuda.max_memory_reserved(), "max_allocated": torch.cuda.max_memory_allocated()}
    torch.cuda.memory._dump_snapshot(str(out / "snapshot.pickle"))
    (out / "real.json").write_text(json.dumps(real) + "\n")
    print(real)
    return 0


if __name__ == "__main__":
    sys.exit(main())
