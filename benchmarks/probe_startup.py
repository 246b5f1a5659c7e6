"""Wall time of `accelwiz probe` as a user runs it: a fresh process each time.

Target (issue: accelwiz probe): under 0.3 s median on a GPU-less machine; the probe never imports torch.
Measures `accelwiz probe`, `accelwiz probe --json`, `python -c "import accelwiz.cli"` (the floor every command
pays), and `nvidia-smi` where it exists. 1 warm-up run, then `--runs` timed runs (median and max).
Run: `python benchmarks/probe_startup.py [--runs 15]`. Writes benchmarks/results/probe_startup.json and prints
a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine, time_command  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 0.3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    accelwiz = shutil.which("accelwiz") or "accelwiz"
    commands = {
        "accelwiz probe": [accelwiz, "probe"],
        "accelwiz probe --json": [accelwiz, "probe", "--json"],
        'python -c "import accelwiz.cli"': [sys.executable, "-c", "import accelwiz.cli"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    nvidia_smi = shutil.which("nvidia-smi")
    if nvidia_smi:
        commands["nvidia-smi"] = [nvidia_smi]
    load_before = os.getloadavg()[0]
    results = {name: time_command(argv, runs=args.runs, warmup=1, ok_codes=(0,))
               for name, argv in commands.items()}
    # A shared 2-core machine: a load average above the core count means the numbers include waiting.
    load = {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}
    import psutil

    host = {**machine(), "physical_cores": psutil.cpu_count(logical=False), "gpu": bool(nvidia_smi),
            "load_average_1min": load}
    verdict = {name: results[name]["median_s"] < TARGET_S
               for name in ("accelwiz probe", "accelwiz probe --json")}
    out = {"machine": host, "target_median_s": TARGET_S, "results": results, "under_target": verdict}
    target = REPO / "benchmarks" / "results" / "probe_startup.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(f"Machine: {host['cpu']}, {host['physical_cores']} physical / {host['logical_cores']} logical "
          f"cores, Python {host['python']}, GPU: {'yes' if host['gpu'] else 'no'}, load average "
          f"{load['before']} -> {load['after']}\n")
    print("| command | median | min | max | runs |\n|---|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| `{name}` | {r['median_s']:.3f} s | {r['min_s']:.3f} s | {r['max_s']:.3f} s | {r['runs']} |")
    print(f"\nTarget: median under {TARGET_S} s: "
          + ", ".join(f"{k} {'met' if ok else 'MISSED'}" for k, ok in verdict.items())
          + f". Wrote {target.relative_to(REPO)}.")


if __name__ == "__main__":
    main()
