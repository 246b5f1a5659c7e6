"""Host RAM of a CPU fine-tune, measured: `accelwiz init --model M --processes N --defaults && accelwiz run` in a
temporary folder, every process of the tree sampled with psutil (RSS every 20 ms), beside `accelwiz estimate
--config accelerate.yaml --format json` for the same plan.

    python benchmarks/cpu_host_ram.py --model tiny --processes 1 --steps 3
    python benchmarks/cpu_host_ram.py --model medium --processes 2 --steps 3 --out benchmarks/results/cpu_host_ram.json

Recorded per run: each process's peak RSS by role (the `accelwiz run` front end, the `accelerate launch`
process, which also hosts torchrun's agent, and each training rank, whose own `ru_maxrss` the run report
carries too), the sum of the tree's RSS at its highest sample, and the estimate's host RAM per machine and per
process. The per-process baseline of accelwiz/estimate/cpu.py (`CPU_PROCESS_BASELINE_BYTES`) is a rank's peak
RSS of the quickstart run (`--model tiny --processes 1`) less the rank's estimated tensors.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def role(process: psutil.Process) -> str:
    """What a process of the tree is, from its command line."""
    try:
        line = " ".join(process.cmdline())
    except psutil.Error:
        return "gone"
    if "accelwiz.launch.launcher" in line or ("accelerate" in line and " launch" in line):
        return "launcher"  # first: its command line names the trainer too
    if "accelwiz.trainer.train" in line or "trainer/train.py" in line:
        return "rank"
    if "accelwiz" in line and " run" in line:
        return "front end"
    return "other"


def sample_tree(root: int, peaks: dict[int, tuple[str, int]]) -> int:
    """Record each process's peak RSS; return the tree's RSS now."""
    total = 0
    try:
        tree = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
    except psutil.Error:
        return 0
    for process in tree:
        try:
            rss = process.memory_info().rss
        except psutil.Error:
            continue
        total += rss
        previous = peaks.get(process.pid, ("other", 0))
        now = role(process)  # a forked child is its parent until it execs: the last role seen that is known
        peaks[process.pid] = (now if now not in ("other", "gone") else previous[0], max(previous[1], rss))
    return total


def measure(model: str, processes: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="aw-cpu-ram-") as folder:
        cwd = Path(folder)
        subprocess.run(["accelwiz", "init", "--model", model, "--processes", str(processes), "--defaults"],
                       cwd=cwd, check=True, capture_output=True)
        estimate = subprocess.run(["accelwiz", "estimate", "--config", "accelerate.yaml", "--format", "json"],
                                  cwd=cwd, capture_output=True, text=True)
        run = subprocess.Popen(["accelwiz", "run", "--steps", str(steps)], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peaks: dict[int, tuple[str, int]] = {}
        tree_peak = 0
        while run.poll() is None:
            tree_peak = max(tree_peak, sample_tree(run.pid, peaks))
            time.sleep(0.02)
        stderr = run.stderr.read() if run.stderr else ""
        if run.returncode != 0:
            raise SystemExit(f"accelwiz run failed ({run.returncode}): {stderr[-2000:]}")
        report = json.loads((cwd / "accelwiz-run" / "run_report.json").read_text())
    by_role: dict[str, list[int]] = {}
    for name, peak in peaks.values():
        by_role.setdefault(name, []).append(peak)
    data = json.loads(estimate.stdout) if estimate.returncode in (0, 1) and estimate.stdout else None
    return {
        "model": model, "processes": processes, "steps": steps,
        "parameters": report["parameters"],
        "rank_peak_rss_bytes": report["peak_memory_bytes"],  # each rank's own ru_maxrss
        "sampled_peak_rss_bytes": {name: sorted(values) for name, values in by_role.items()},
        "tree_peak_rss_bytes": tree_peak,
        "estimate": None if data is None else {
            "host_bytes_per_machine": data["estimate"]["host_bytes_per_node"],
            "per_process_bytes": data["estimate"].get("cpu", {}).get("per_process_bytes"),
            "verdict": data["verdict"],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = measure(args.model, args.processes, args.steps)
    result["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform()}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        rows = json.loads(args.out.read_text()) if args.out.exists() else []
        rows = [r for r in rows if (r["model"], r["processes"]) != (args.model, args.processes)] + [result]
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
