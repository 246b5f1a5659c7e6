"""accelwiz's estimate against published, measured peak GPU memory, through the command a user types (no GPU).

The rows live in benchmarks/published/ (design.py, frozen.py; sources.py says which set each source is in and
why). Each row is run as `accelwiz estimate ARGV --format json` in-process through the real command-line app
(typer's CliRunner), with its Accelerate YAML through `--config` where the row has one, and its JSON read back.
Nothing is built from internal objects: a row the command line cannot say is listed as "not expressible".

The figure compared with what the source measured, read from the JSON's `estimate.peak`:

* `nvidia-smi` (the process's whole footprint): `total` (reserved + CUDA context, cuBLAS, NCCL); where the source
  measured its own CUDA context on its stack (CUDA 11's eager loading), that context replaces the CLI's;
* `reserved` (torch.cuda.max_memory_reserved or memory_reserved()): `reserved` + the cuBLAS workspaces (where
  batches vary in length, `reserved` counts the middle of the range the cache grows through over a run:
  estimate/varying_lengths.py; `reserved_long_run` is its top, reported, not scored);
* `allocated` (torch.cuda.max_memory_allocated): `allocated`.

Where the reserve would pass the GPU's memory but the allocated peak and runtime fit, the allocator releases its
cache and retries: the figure is held at the GPU's memory (`estimate.peak.device_total`), as the verdict does.

Per set (design: developed against; frozen: only scored) it prints the median |error|, the worst over and under,
every row, and the verdict agreement: a row measured to run must not be "does not fit", a row measured out of
memory must not be "fits". Writes benchmarks/results/estimator_vs_published.json, or the path in
ACCELWIZ_PUBLISHED_OUT (a scratch run beside the committed results).

    python benchmarks/estimator_vs_published.py
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.published import ROWS, SOURCES  # noqa: E402

OUT = Path(os.environ.get("ACCELWIZ_PUBLISHED_OUT") or REPO / "benchmarks" / "results" / "estimator_vs_published.json")


def run_cli(row: dict) -> dict:
    """`accelwiz estimate` on the row's argv (and `--config` of its YAML), in-process; its JSON output."""
    from typer.testing import CliRunner

    from accelwiz.cli import app

    argv = shlex.split(row["argv"])
    with tempfile.TemporaryDirectory() as folder:
        if row.get("config"):
            path = Path(folder) / "accelerate.yaml"
            path.write_text(row["config"])
            argv += ["--config", str(path)]
        cwd = os.getcwd()
        os.chdir(REPO)  # a row's --model may be a config.json path relative to the repository root
        try:
            # rows run as written: the developer's allocator settings are not theirs (resolution/alloc_conf.py)
            result = CliRunner().invoke(app, argv, env={"PYTORCH_CUDA_ALLOC_CONF": None, "PYTORCH_ALLOC_CONF": None})
        finally:
            os.chdir(cwd)
    if result.exit_code not in (0, 1):  # 1: does not fit, still a JSON estimate
        raise RuntimeError(f"{row['key']}: `accelwiz {shlex.join(argv)}` exited {result.exit_code}: "
                           f"{result.output[-400:]}")
    return json.loads(result.stdout)


def figure(row: dict, peak: dict) -> int:
    """accelwiz's figure comparable with what the source measured (module docstring)."""
    parts = peak["runtime_parts"]
    if row["metric"] == "nvidia-smi":
        ours = peak["total"] + row.get("context_measured_bytes", parts["cuda_context"]) - parts["cuda_context"]
    elif row["metric"] == "reserved":
        ours = peak["reserved"] + parts["cublas_workspace"]
    else:
        return peak["allocated"]
    device = peak.get("device_total")
    if device and peak["total"] > device >= peak["allocated"] + peak["runtime"]:
        ours -= peak["total"] - device  # the allocator retries at the GPU's memory instead of growing
    return ours


def compare(row: dict) -> dict:
    """One row: the argv, accelwiz's figure and verdict, the error against the measured figure."""
    out = {key: row.get(key) for key in ("key", "source", "set", "url", "quote", "metric", "argv")}
    if not row.get("argv"):
        return {**out, "not_expressible": row["not_expressible"]}
    data = run_cli(row)
    ours = figure(row, data["estimate"]["peak"])
    verdict = data.get("verdicts", {}).get("gpu_memory")
    ran = row.get("ran", True)
    out.update(
        config=row.get("config"), estimate_gib=round(ours / 2**30, 2), verdict=verdict, ran=ran,
        # a run measured to fit must not be "does not fit"; one measured out of memory must not be "fits"
        verdict_contradiction=(ran and verdict == "does not fit") or (not ran and verdict == "fits"),
        unexpressed=row.get("unexpressed", []), known_miss=row.get("known_miss", ""),
    )
    if row.get("measured_bytes"):
        out.update(measured_gib=round(row["measured_bytes"] / 2**30, 2),
                   error_percent=round(100 * (ours - row["measured_bytes"]) / row["measured_bytes"], 1))
    return out


def summary(rows: list[dict]) -> dict:
    scored = [r for r in rows if "error_percent" in r]
    errors = [r["error_percent"] for r in scored]
    result = {"rows": len(rows), "scored": len(scored),
              "not_expressible": sum("not_expressible" in r for r in rows),
              "verdict_checked": sum("verdict" in r for r in rows),
              "verdict_contradictions": [r["key"] for r in rows if r.get("verdict_contradiction")]}
    if errors:
        worst_over = max(scored, key=lambda r: r["error_percent"])
        worst_under = min(scored, key=lambda r: r["error_percent"])
        result.update(median_abs_error_percent=round(statistics.median(map(abs, errors)), 1),
                      worst_over=[worst_over["key"], worst_over["error_percent"]],
                      worst_under=[worst_under["key"], worst_under["error_percent"]],
                      beyond_25_percent=sum(abs(e) > 25 for e in errors), under_estimates=sum(e < 0 for e in errors))
    return result


def main() -> None:
    import accelwiz

    rows = [compare(row) for row in ROWS]
    result = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()} {platform.system()} (CPU only: the estimate needs no GPU)",
        "accelwiz": getattr(accelwiz, "__version__", "?"),
        "path": "accelwiz estimate ARGV --format json (typer CliRunner on accelwiz.cli.app), --config for YAML rows",
        "sources": {name: {"set": set_, "why": why} for name, (set_, why) in SOURCES.items()},
        "design": summary([r for r in rows if r["set"] == "design"]),
        "frozen": summary([r for r in rows if r["set"] == "frozen"]),
        "goal_on_frozen": {"median_abs_error_percent": 7, "worst_abs_error_percent": 25, "verdict_contradictions": 0},
        "rows": rows,
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for set_ in ("design", "frozen"):
        print(f"\n## {set_} set\n")
        print("| row | metric | measured | accelwiz | error | verdict | note |\n|---|---|---:|---:|---:|---|---|")
        for r in (r for r in rows if r["set"] == set_):
            if "not_expressible" in r:
                print(f"| [{r['key']}]({r['url']}) | {r['metric']} | | | | | not expressible: {r['not_expressible']} |")
                continue
            measured = f"{r['measured_gib']:.1f} GiB" if "measured_gib" in r else ("ran" if r["ran"] else "OOM")
            error = f"{r['error_percent']:+.1f}%" if "error_percent" in r else ""
            note = "; ".join(filter(None, ["VERDICT CONTRADICTS" if r["verdict_contradiction"] else "",
                                           "known miss" if r["known_miss"] else "",
                                           *(f"unexpressed: {u}" for u in r["unexpressed"])]))
            print(f"| [{r['key']}]({r['url']}) | {r['metric']} | {measured} | {r['estimate_gib']:.1f} GiB | {error}"
                  f" | {r['verdict'] or '-'} | {note} |")
        print(f"\n{set_}: {json.dumps(result[set_])}")


if __name__ == "__main__":
    main()
