"""How long `accelwiz estimate --trace` takes, and how much RAM: an 8B Llama at 4096 tokens, and 70B.

Each case runs in a fresh process (imports of torch and transformers included, as a user pays them) and
records wall time, CPU time and peak RSS (getrusage of the child). Targets (issue 12): 8B at 4096 tokens in
under 60 s on 2 cores and under 3 GiB RSS. Writes benchmarks/results/trace_timing.json.

    python benchmarks/trace_timing.py            # all cases
    python benchmarks/trace_timing.py --only 0   # one case
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"

CASES = [
    {"model": "llama-3.1-8b", "micro_batch": 1, "seq_len": 4096, "layers": None},
    {"model": "llama-3.1-8b", "micro_batch": 1, "seq_len": 4096, "layers": 4},
    {"model": "llama-3.1-70b", "micro_batch": 1, "seq_len": 4096, "layers": 4},
    {"model": "llama-3.1-70b", "micro_batch": 1, "seq_len": 4096, "layers": None},
]


def worker(case: dict) -> dict:
    """In the child: resolve, trace, compare; print the figures."""
    sys.path.insert(0, str(REPO))
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.trace import trace_workload
    from accelwiz.estimate.trace_compare import compare
    from accelwiz.estimate.resolved import workload_from_options

    workload = workload_from_options(model=case["model"], micro_batch=case["micro_batch"], seq_len=case["seq_len"])
    estimate = estimate_memory(workload, Strategy("single"))
    started = time.perf_counter()
    trace = trace_workload(workload, layers=case["layers"], time_limit=1e9)
    seconds = time.perf_counter() - started
    comparison = compare(estimate, trace)
    return {
        "trace_seconds": round(seconds, 2),
        "layers": trace.layers,
        "layers_traced": trace.layers_traced,
        "analytic": comparison.analytic,
        "traced": comparison.traced,
        "difference": {k: round(v, 4) if v is not None else None for k, v in
                       ((row, comparison.difference(row)) for row in comparison.analytic)},
        "peak_phase": {"analytic": comparison.analytic_phase, "traced": comparison.traced_phase},
    }


def run(case: dict) -> dict:
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps(case)], capture_output=True,
                          text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {**case, "error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    return {
        **case,
        **json.loads(lines[-1]),
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "max_rss_mib": round(after.ru_maxrss / 1024),  # Linux: KiB; the largest child so far
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case numbers")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    cases = [CASES[int(i)] for i in args.only.split(",")] if args.only else CASES
    rows = []
    for case in cases:
        row = run(case)
        print(json.dumps(row), flush=True)
        rows.append(row)
    machine = {
        "cpu": next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name")), platform.processor()),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_1min": os.getloadavg()[0],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "trace_timing.json"
    if args.only and path.exists():  # keep the other cases' rows
        def key(row: dict) -> tuple:
            return row["model"], row["seq_len"], row.get("layers_traced", row.get("layers"))

        kept = {key(row): row for row in json.loads(path.read_text())["rows"]}
        rows = list({**kept, **{key(row): row for row in rows}}.values())
    path.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
