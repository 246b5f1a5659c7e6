"""The analytic formulas against the fake-tensor trace, for every setting of the test matrix: the table in
docs/performance.md ("Formula vs trace") and benchmarks/results/formula_vs_trace.json.

    python benchmarks/formula_vs_trace.py            # run the matrix, write the JSON and the Markdown table
    python benchmarks/formula_vs_trace.py --print    # print the Markdown table from the saved JSON

The matrix (accelwiz/estimate/trace_matrix.py) is the one tests/estimate/test_trace_matrix.py asserts on.
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


def run_matrix() -> list[dict]:
    from accelwiz.estimate.trace_matrix import matrix, run

    rows = []
    for setting in matrix():
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
    args = parser.parse_args()
    if args.print:
        print(table(json.loads(RESULTS.read_text())["rows"]))
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
