"""The quickstart's training speed alone and beside a CPU-bound neighbour, by thread setting (issue 33 Build 2).

    python benchmarks/run_threads.py [--steps 30] [--out benchmarks/results/run_threads.json]

The quickstart (`accelwiz init --model tiny --defaults`, the built-in trainer, `--steps` steps) is trained three
ways: `accelerate launch` of the same trainer with accelerate's own thread guess (what `run` launched before it
set threads), `accelwiz run` (cores / processes per machine), and `accelwiz run --threads-per-process 1`. Each
alone, then beside a neighbour: another two-process CPU job (`accelwiz run` of a `--processes 2` plan, training
until it is stopped). Speed is the trainer's own tokens/s from run_report.json. The machine may be shared with
other work: run it once or twice, and report the load beside the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ACCELWIZ = [sys.executable, "-m", "accelwiz"]


def init(folder: Path, *extra: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([*ACCELWIZ, "init", "--model", "tiny", "--defaults", *extra], cwd=folder, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def train(folder: Path, how: str, steps: int) -> float:
    """One quickstart run; its tokens/s."""
    out = folder / f"out-{how}-{time.monotonic_ns()}"
    trainer = ["--config", "accelerate.yaml", "--steps", str(steps), "--output-dir", str(out)]
    if how == "accelerate_default":
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        argv = ["accelerate", "launch", "--config_file", "accelerate.yaml", "-m", "accelwiz.trainer.train", *trainer]
    else:
        env = dict(os.environ)
        threads = ["--threads-per-process", "1"] if how == "accelwiz_run_1_thread" else []
        argv = [*ACCELWIZ, "run", "--config", "accelerate.yaml", *threads, "--steps", str(steps), "--output-dir",
                str(out)]
    subprocess.run(argv, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return float(json.loads((out / "run_report.json").read_text())["tokens_per_second"])


def neighbour(folder: Path) -> subprocess.Popen:
    """A two-process CPU job that trains until stopped."""
    return subprocess.Popen([*ACCELWIZ, "run", "--steps", "1000000", "--output-dir", "out"], cwd=folder,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "run_threads.json")
    args = parser.parse_args()
    ways = ("accelerate_default", "accelwiz_run", "accelwiz_run_1_thread")
    results: dict[str, dict[str, float]] = {"alone": {}, "beside_neighbour": {}}
    load_before = os.getloadavg()[0]  # other work on the machine (it is shared)
    with tempfile.TemporaryDirectory() as tmp:
        quick, busy = Path(tmp) / "quickstart", Path(tmp) / "neighbour"
        init(quick)
        init(busy, "--processes", "2")
        for way in ways:
            results["alone"][way] = train(quick, way, args.steps)
        job = neighbour(busy)
        try:
            time.sleep(20)  # the neighbour past its start-up, training
            for way in ways:
                results["beside_neighbour"][way] = train(quick, way, args.steps)
        finally:
            os.killpg(job.pid, signal.SIGTERM)
            job.wait(timeout=60)
    report = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": len(os.sched_getaffinity(0)),
                          "load_average_1m_before": load_before},
              "steps": args.steps, "tokens_per_second": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
