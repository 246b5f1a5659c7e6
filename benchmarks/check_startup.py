"""Cold-start time of `accelwiz check` against `accelerate env` and `python -c "import accelerate"`.

Targets (issue: accelwiz check): one file under 0.3 s median and at least 8x faster than `accelerate env`;
the whole corpus (~130 files) in one call under 2 s. Run: `python benchmarks/check_startup.py [--runs 15]`.
Writes benchmarks/results/check_startup.json and prints a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import console_script, machine, time_command  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "real"
ONE_FILE = REPO / "templates" / "ddp.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    accelwiz, accelerate = console_script("accelwiz"), console_script("accelerate")
    one = ONE_FILE if ONE_FILE.exists() else next(CORPUS.glob("*.yaml"))
    corpus = sorted(CORPUS.iterdir()) if CORPUS.is_dir() else []
    results = {
        "accelwiz check (one file)": time_command([accelwiz, "check", str(one)], runs=args.runs),
        f"accelwiz check (corpus, {len(corpus)} files)":
            time_command([accelwiz, "check", *map(str, corpus)], runs=max(3, args.runs // 3)) if corpus else None,
        "accelerate env": time_command([accelerate, "env"], runs=max(3, args.runs // 3)),
        'python -c "import accelerate"': time_command([sys.executable, "-c", "import accelerate"],
                                                      runs=max(3, args.runs // 3)),
        "python -c pass": time_command([sys.executable, "-c", "pass"], runs=args.runs),
    }
    results = {k: v for k, v in results.items() if v is not None}
    speedup = results["accelerate env"]["median_s"] / results["accelwiz check (one file)"]["median_s"]
    out = {"machine": machine(), "results": results, "speedup_vs_accelerate_env": round(speedup, 1)}
    target = REPO / "benchmarks" / "results" / "check_startup.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print("| command | median | min | max | runs |\n|---|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| `{name}` | {r['median_s']:.3f} s | {r['min_s']:.3f} s | {r['max_s']:.3f} s | {r['runs']} |")
    print(f"\n`accelwiz check` is {speedup:.1f}x faster than `accelerate env`. Wrote {target.relative_to(REPO)}.")


if __name__ == "__main__":
    main()
