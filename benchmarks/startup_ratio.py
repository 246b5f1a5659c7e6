"""Start-up of the fast commands as a ratio to `accelerate env`, measured in one interleaved run (issue 33).

The machine may be shared: absolute times move with the load, so every repetition runs each command once, in a
rotating order, and the ratio is taken per repetition (accelerate env's time over the command's, the same
minute's load on both) and then the median over repetitions. Goal: each fast command >= 10x.

    python benchmarks/startup_ratio.py [--reps 7] [--before DIR]

`--before DIR` also times a tree of an older commit (`git archive REV | tar -x -C DIR`) in the same rotation,
launched the same way as this tree (`python -c` running `accelwiz.cli.main` from that directory), so before and
after share the load. Writes benchmarks/results/startup_ratio.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import console_script, machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
COMMANDS = {  # the fast commands, as a user types them
    "check": ["check", str(REPO / "templates" / "ddp.yaml")],
    "probe": ["probe"],
    "estimate": ["estimate", "--model", "llama-8b", "--system", "8xH100-80GB"],
}
_FROM_TREE = "import sys; sys.path.insert(0, {tree!r}); sys.argv[0] = 'accelwiz'; from accelwiz.cli import main; main()"


def _argvs(before: Path | None) -> dict[str, list[str]]:
    accelwiz, accelerate = console_script("accelwiz"), console_script("accelerate")
    argvs = {"accelerate env": [accelerate, "env"]}
    argvs.update({f"accelwiz {name}": [accelwiz, *args] for name, args in COMMANDS.items()})
    if before is not None:
        for label, tree in (("after", REPO), ("before", before)):
            argvs.update({f"{label}: {name}": [sys.executable, "-c", _FROM_TREE.format(tree=str(tree)), *args]
                          for name, args in COMMANDS.items()})
    return argvs


# Bytecode caches as on a user's machine: pip wrote accelerate's and typer's .pyc at install, and the first run of
# an editable accelwiz writes its own. A PYTHONDONTWRITEBYTECODE=1 in the environment (this project's sandboxes
# set it) would leave accelwiz alone compiling its ~60 modules from source on every run (about 30 ms here).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds, and CPU seconds (user + system) of the process and its children: CPU time moves less than
    wall time when other work shares the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, cwd=cwd, env=ENV)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a tree of an older commit, timed in the same rotation")
    args = parser.parse_args()
    argvs = _argvs(args.before)
    names = list(argvs)
    cwd = RESULTS  # any folder without a plan file or config beside it
    for argv in argvs.values():  # untimed: .pyc caches and the page cache warm for every command alike
        _once(argv, cwd)
    load_before = os.getloadavg()
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(args.reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            wall, used = _once(argvs[name], cwd)
            samples[name].append(wall)
            cpu[name].append(used)
    load_after = os.getloadavg()
    yardstick = samples["accelerate env"]
    rows = {}
    for name, times in samples.items():
        ratios = [a / t for a, t in zip(yardstick, times)]
        cpu_ratios = [a / t for a, t in zip(cpu["accelerate env"], cpu[name])]
        rows[name] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
                      "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
                      "cpu_median_s": statistics.median(cpu[name]), "cpu_ratio_median": statistics.median(cpu_ratios)}
    out = {"machine": machine(), "reps": args.reps, "loadavg_1_5_15_before": load_before,
           "loadavg_1_5_15_after": load_after, "before_tree": str(args.before) if args.before else None,
           "results": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "startup_ratio.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"{out['machine']['cpu']}, {out['machine']['logical_cores']} cores; load average {load_before[0]:.1f} "
          f"before, {load_after[0]:.1f} after; {args.reps} interleaved repetitions\n")
    print("| command | wall median | min | max | accelerate env / command, wall (median of per-rep ratios) | "
          "worst rep | CPU median | ratio, CPU time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        print(f"| `{name}` | {r['median_s']:.3f} s | {r['min_s']:.3f} s | {r['max_s']:.3f} s | "
              f"{r['ratio_median']:.1f}x | {r['ratio_min']:.1f}x | {r['cpu_median_s']:.3f} s | "
              f"{r['cpu_ratio_median']:.1f}x |")
    short = [n for n in rows if n.startswith("accelwiz ") and rows[n]["ratio_median"] < 10]
    print(f"\n{'below the 10x goal: ' + ', '.join(short) if short else 'every fast command >= 10x accelerate env'}")


if __name__ == "__main__":
    main()
