"""`python -X importtime` per fast command: the top imports, and budgets that fail loudly (issue 33).

For each fast command (probe, check, estimate with a preset, init --help, rule, schema) this runs the console
script's `main()` under `python -X importtime` in a fresh interpreter and prints its ten most expensive top-level
imports. It exits 1 when a command imports torch, accelerate, deepspeed or transformers (seconds each), or
imports more modules than its budget: module counts, unlike milliseconds, do not move with the machine's load,
so a budget here is a regression of the import graph, not noise. Raise a budget only with the reason in the
commit message. Times are printed for orientation (they do move with the load).

    python benchmarks/import_budget.py [--top 10]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "accelerate", "deepspeed", "transformers")
# command -> (argv, most modules it may import: Python's own, pydantic, typer/click and accelwiz's, all counted;
# measured 2026-12-06 after issue 33's lazy commands and rule modules: 338, 323, 332, 259, 318, 274; plus
# ~10% headroom)
BUDGETS: dict[str, tuple[list[str], int]] = {
    "probe": (["probe"], 370),
    "check": (["check", str(REPO / "templates" / "ddp.yaml")], 355),
    "estimate": (["estimate", "--model", "llama-8b", "--system", "8xH100-80GB"], 365),
    "init --help": (["init", "--help"], 285),
    "rule": (["rule", "AW001"], 350),
    "schema": (["schema", "--which", "deepspeed"], 300),
}
_RUN = "import sys; sys.argv = ['accelwiz', *sys.argv[1:]]; from accelwiz.cli import main; main()"
_ROW = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def importtime(argv: list[str]) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, depth, name) of every import the command makes, in order."""
    with tempfile.TemporaryDirectory() as cwd:  # no plan or config beside it
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", _RUN, *argv], capture_output=True,
                              text=True, cwd=cwd)
    if done.returncode not in (0, 1):
        raise SystemExit(f"accelwiz {' '.join(argv)} exited {done.returncode}: {done.stderr[-800:]}")
    rows = []
    for line in done.stderr.splitlines():
        match = _ROW.match(line)
        if match:
            rows.append((int(match.group(2)), len(match.group(3)) // 2, match.group(4)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    failures = []
    for name, (argv, budget) in BUDGETS.items():
        rows = importtime(argv)
        modules = {module for _, _, module in rows}
        heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
        top = sorted(((cumulative, module) for cumulative, depth, module in rows if depth == 0), reverse=True)
        total_ms = sum(cumulative for cumulative, depth, _ in rows if depth == 0) / 1000
        accelwiz = sum(m.startswith("accelwiz") for m in modules)
        print(f"## accelwiz {' '.join(argv)}\n{len(modules)} modules ({accelwiz} accelwiz), budget "
              f"{budget or 'unset'}; imports {total_ms:.0f} ms")
        for cumulative, module in top[:args.top]:
            print(f"  {cumulative / 1000:8.1f} ms  {module}")
        if heavy:
            failures.append(f"{name}: imports {', '.join(heavy[:8])}")
        if budget and len(modules) > budget:
            failures.append(f"{name}: {len(modules)} modules, over its budget of {budget}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        raise SystemExit(1)
    print("\nno heavy import, every command within its budget")


if __name__ == "__main__":
    main()
