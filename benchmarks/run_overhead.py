"""`accelwiz run` against `accelerate launch` on the same tiny script and config: what does the preflight cost?

    python benchmarks/run_overhead.py [--repeats 5]

Both commands run a script that only prints, on a one-process CPU config (the harshest case: the launch itself
is all there is to measure). They alternate, one warm-up each, then the median wall time of N runs. accelwiz's
extra work (importing the CLI, checking the config with every rule, probing this machine, the summary) is also
timed alone with `--dry-run`, and against `python -m accelerate.commands.launch` (the invocation accelwiz uses,
which skips the `accelerate` CLI's imports of every other subcommand). Writes benchmarks/results/run_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = (
    "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"
    "num_machines: 1\nmixed_precision: 'no'\n"
)
TARGET_PERCENT = 3.0


def wall(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "run_overhead.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "accelerate.yaml").write_text(CONFIG)
        (cwd / "tiny.py").write_text('print("ok")\n')
        commands = {
            "accelerate_launch": ["accelerate", "launch", "--config_file", "accelerate.yaml", "tiny.py"],
            # the launcher invocation accelwiz itself uses: isolates the cost of the preflight
            "accelerate_launch_module": [
                sys.executable,
                "-m",
                "accelerate.commands.launch",
                "--config_file",
                "accelerate.yaml",
                "tiny.py",
            ],
            "accelwiz_run": [sys.executable, "-m", "accelwiz", "run", "--config", "accelerate.yaml", "tiny.py"],
            "accelwiz_run_dry_run": [
                sys.executable,
                "-m",
                "accelwiz",
                "run",
                "--config",
                "accelerate.yaml",
                "--dry-run",
                "tiny.py",
            ],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():  # warm-up: page cache, .pyc files
            wall(argv, cwd)
        for _ in range(args.repeats):
            for name, argv in commands.items():
                times[name].append(wall(argv, cwd))
    medians = {name: statistics.median(values) for name, values in times.items()}
    overhead = 100 * (medians["accelwiz_run"] - medians["accelerate_launch"]) / medians["accelerate_launch"]
    result = {
        "what": "median wall seconds; a script that prints, 1-process CPU config",
        "repeats": args.repeats,
        "median_seconds": {k: round(v, 3) for k, v in medians.items()},
        "runs_seconds": {k: [round(v, 3) for v in values] for k, values in times.items()},
        "overhead_percent": round(overhead, 1),
        "target_percent": TARGET_PERCENT,
        "preflight_seconds_vs_same_launcher": round(medians["accelwiz_run"] - medians["accelerate_launch_module"], 3),
        "within_target": overhead <= TARGET_PERCENT,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
