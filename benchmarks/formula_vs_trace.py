"""The analytic formulas against the fake-tensor trace, for every setting of the test matrix: the table in
docs/performance.md ("Formula vs trace") and benchmarks/results/formula_vs_trace.json.

    python benchmarks/formula_vs_trace.py            # run the matrix, write the JSON and the Markdown table
    python benchmarks/formula_vs_trace.py --print    # print the Markdown table from the saved JSON
    python benchmarks/formula_vs_trace.py --only llama-3.2-1b   # one architecture's rows, printed, nothing saved

The matrix (accelwiz/estimate/trace_matrix.py) is the one tests/estimate/test_trace_matrix.py asserts on.

Every figure here is a MECHANISM CHECK, built from internal objects on purpose: the formulas of memory.py
(`estimate_memory` on a `Workload`) against the trace of the same workload (`trace_training_step`), category by
category, on 2-layer models at their published widths, built from transformers' config classes (shapes no
`--model` names). It says whether a formula counts what the real model code allocates, not how close a command's
answer is to a GPU: it is no accuracy claim for `accelwiz estimate`. The accuracy figures come from the command a
user types, never from internals: benchmarks/estimator_accuracy.py (GPU measurements against `accelwiz estimate
... --format json`, and the trace column as `accelwiz estimate ... --trace --format json`) and
benchmarks/estimator_vs_published.py (published measurements against the same argv).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "formula_vs_trace.json"
sys.path.insert(0, str(REPO))

MIB = 2**20


def run_matrix(only: str | None = None) -> list[dict]:
    from accelwiz.estimate.trace_matrix import matrix, run

    rows = []
    for setting in matrix():
        if only is not None and setting.arch != only:
            continue
        row = run(setting)
        print(json.dumps(row), flush=True, file=sys.stderr)
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| setting | weights MiB | grads MiB | optimizer MiB | activations+logits MiB (analytic / trace) | err "
        "| peak MiB (analytic / trace) | err | peak phase |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        a, t, e = r["analytic"], r["traced"], r["error"]
        same = all(a[k] == t[k] for k in ("weights", "gradients", "optimizer_states"))
        phase = r["traced_phase"]
        if r["analytic_phase"] != phase:
            phase += f" (analytic: {r['analytic_phase']})"
        lines.append(
            f"| {r['setting']} | {t['weights'] / MIB:,.0f} | {t['gradients'] / MIB:,.0f} | "
            f"{t['optimizer_states'] / MIB:,.0f}{'' if same else ' (differs)'} | "
            f"{a['activations'] / MIB:,.0f} / {t['activations'] / MIB:,.0f} | {e['activations']:+.1%} | "
            f"{a['peak'] / MIB:,.0f} / {t['peak'] / MIB:,.0f} | {e['peak']:+.1%} | "
            f"{phase} |"
        )
    activations = [abs(r["error"]["activations"]) for r in rows]
    peaks = [abs(r["error"]["peak"]) for r in rows]
    exact = sum(all(r["analytic"][k] == r["traced"][k] for k in ("weights", "gradients", "optimizer_states"))
                for r in rows)
    lines += [
        "",
        f"{len(rows)} settings: weights, gradients and optimizer states equal to the byte in {exact}; "
        f"activations+logits median |error| {statistics.median(activations):.1%}, worst {max(activations):.1%}; "
        f"peak median |error| {statistics.median(peaks):.2%}, worst {max(peaks):.1%}.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table from the saved JSON")
    parser.add_argument("--only", help="one architecture's rows (e.g. llama-3.2-1b), printed; the JSON is kept")
    args = parser.parse_args()
    if args.print:
        print(table(json.loads(RESULTS.read_text())["rows"]))
        return 0
    if args.only:
        print(table(run_matrix(args.only)))
        return 0
    started = time.perf_counter()
    rows = run_matrix()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"seconds": round(time.perf_counter() - started, 1), "rows": rows}, indent=2)
                       + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
