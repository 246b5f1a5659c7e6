"""The caching-allocator model against the real one: 15 recorded event streams replayed.

tests/fixtures/allocator_streams holds the CUDA caching allocator's own event stream of 15 training settings on
an NVIDIA H200 (torch 2.11.0+cu130; benchmarks/gpu_step.py with `--history`) and each run's real
max_memory_allocated / max_memory_reserved. Each stream is replayed through accelwiz/estimate/allocator.py
twice: as a prediction has it (no addresses: a new segment lies below the last) and with the addresses
cudaMalloc returned (which only order equal cached blocks).

    python benchmarks/allocator_real_streams.py     # a second or two

Writes benchmarks/results/allocator_real_streams.json and prints a Markdown table (docs/performance.md,
"Checked against a real allocator"); tests/estimate/test_allocator_real_streams.py asserts the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
FIXTURES = REPO / "tests" / "fixtures" / "allocator_streams"


def main() -> int:
    from accelwiz.estimate.allocator import replay
    from accelwiz.estimate.allocator_stream import events_from_history, read_history

    streams = json.loads((FIXTURES / "index.json").read_text())["streams"]
    rows = []
    print("| # | setting | real reserved GiB | replay GiB (error) | with recorded addresses (error) |\n"
          "|---|---|---:|---:|---:|")
    for name in sorted(streams):
        real = streams[name]
        entries = read_history(FIXTURES / name)
        predicted = replay(events_from_history(entries, addresses=False))
        recorded = replay(events_from_history(entries))
        row = {"stream": name, "setting": real["setting"], "real_reserved": real["max_reserved"],
               "real_allocated": real["max_allocated"], "replay_reserved": predicted.peak_reserved,
               "replay_allocated": predicted.peak_allocated, "recorded_reserved": recorded.peak_reserved,
               "recorded_allocated": recorded.peak_allocated}
        rows.append(row)
        print(f"| {name[:2]} | {real['setting']} | {real['max_reserved'] / 2**30:.3f} | "
              f"{predicted.peak_reserved / 2**30:.3f} ({_error(predicted.peak_reserved, real['max_reserved'])}) | "
              f"{recorded.peak_reserved / 2**30:.3f} ({_error(recorded.peak_reserved, real['max_reserved'])}) |")
    out = REPO / "benchmarks" / "results" / "allocator_real_streams.json"
    out.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    return 0


def _error(value: int, real: int) -> str:
    return f"{(value / real - 1) * 100:+.2f}%"


if __name__ == "__main__":
    sys.exit(main())
