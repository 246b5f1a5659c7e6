"""accelwiz's estimate against published, measured peak GPU memory (no GPU needed to run this).

The rows live in accelwiz/estimate/published.py (`PUBLISHED_MEASUREMENTS`): HF transformers' single-GPU guide
(bert-large, V100), the PEFT README table (T0_3B: full, LoRA, LoRA + ZeRO-3 offload), PEFT's DeepSpeed and FSDP
guides (Llama-2-70B LoRA/QLoRA on 8 and 2 GPUs), torchtune's README table (Llama 3.1), Answer.AI's fsdp_qlora
benchmarks (Llama-2 7B/70B and Mistral 7B on 2 x RTX 3090/4090, FSDP1). Each row carries its
URL, the quoted sentence or table cell, the settings and how it was measured:

* `nvidia-smi`: the process's whole footprint; compared with accelwiz's reserved peak plus the runtime beside
  it (CUDA context, cuBLAS workspaces, NCCL: runtime.py, for the GPU and CUDA the source names), with the
  source's own measured context in place of accelwiz's where it gives one;
* `reserved`: torch.cuda.max_memory_reserved; compared with accelwiz's reserved peak plus the cuBLAS workspaces
  (they come from the caching allocator);
* `allocated`: torch.cuda.max_memory_allocated (or the allocator's own peak); compared with accelwiz's
  allocated figure (no reserve, no runtime).

A row whose setting accelwiz does not model (`known_miss`) is shown with the reason, and left out of the
"modelled" summary; the summary over all rows is printed too. Writes
benchmarks/results/estimator_vs_published.json and prints the Markdown table docs/performance.md shows.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from accelwiz.estimate.published import PUBLISHED_MEASUREMENTS, PublishedMeasurement  # noqa: E402


def compare(row: PublishedMeasurement) -> dict:
    """accelwiz's figure for the row's settings, comparable with what the source measured."""
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.models import resolve_model
    from accelwiz.estimate.runtime import runtime
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.probe.gpus import match_gpu_name

    workload = Workload(resolve_model(row.model), **row.workload)
    strategy = Strategy(**row.strategy)
    estimate = estimate_memory(workload, strategy, gpu=row.gpu)
    # only what `accelwiz estimate` computes from the row's settings: no figure measured by the source is fed back
    beside = runtime(strategy.world_size, strategy.nodes, row.gpu, row.cuda_major)
    # where the reserve would pass the GPU's memory, the allocator releases its cache and retries: held there
    gpu = match_gpu_name(row.gpu) if row.gpu else None
    held = estimate.need_on(gpu.memory_bytes if gpu else None) - estimate.per_gpu_total
    if row.metric == "nvidia-smi":  # the reserved peak and the runtime beside it, on the source's stack
        ours = estimate.reserved + beside.total + held
    elif row.metric == "reserved":  # max_memory_reserved: the cuBLAS workspaces come from the allocator too
        ours = estimate.reserved + beside.cublas + held
    else:
        ours = estimate.allocated
    return {
        "key": row.key,
        "url": row.url,
        "quote": row.quote,
        "model": row.model,
        "regime": workload.regime,
        "strategy": strategy.short_label + (f" x{strategy.world_size}" if strategy.world_size > 1 else ""),
        "metric": row.metric,
        "measured_gib": round(row.measured_bytes / 2**30, 2),
        "estimate_gib": round(ours / 2**30, 2),
        "error_percent": round(100 * (ours - row.measured_bytes) / row.measured_bytes, 1),
        "peak_phase": getattr(estimate, "peak_phase", ""),
        "allocator_retries": held < 0,
        "settings": row.settings,
        "known_miss": row.known_miss,
    }


def summary(rows: list[dict]) -> dict:
    errors = [r["error_percent"] for r in rows]
    if not errors:
        return {"rows": 0}
    return {"rows": len(rows), "median_abs_error_percent": round(statistics.median(map(abs, errors)), 1),
            "worst_abs_error_percent": max(map(abs, errors)), "worst_under_percent": min(min(errors), 0.0),
            "under_estimates": sum(e < 0 for e in errors)}


def main() -> None:
    rows = [compare(row) for row in PUBLISHED_MEASUREMENTS]
    modelled = [r for r in rows if not r["known_miss"]]
    result = {
        "source": "accelwiz/estimate/published.py PUBLISHED_MEASUREMENTS (measured peaks with their URLs)",
        "all_rows": summary(rows),
        "modelled_rows": summary(modelled),
        # reserved: measured as the process's footprint (nvidia-smi: what runs out), compared with reserved +
        # runtime, or as torch.cuda.max_memory_reserved, compared with reserved + cuBLAS workspaces; allocated:
        # torch.cuda.max_memory_allocated, compared with the allocated peak
        "reserved_rows": summary([r for r in rows if r["metric"] != "allocated"]),
        "allocated_rows": summary([r for r in rows if r["metric"] == "allocated"]),
        "targets": {"median_abs_error_percent": 10, "worst_abs_error_percent": 20},
        "rows": rows,
    }
    out = REPO / "benchmarks" / "results" / "estimator_vs_published.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print("| source | model | regime | strategy | metric | measured | accelwiz | error | note |")
    print("|---|---|---|---|---|---:|---:|---:|---|")
    for r in rows:
        note = "known miss" if r["known_miss"] else ""
        print(f"| [{r['key']}]({r['url']}) | {r['model']} | {r['regime']} | {r['strategy']} | {r['metric']}"
              f" | {r['measured_gib']:.1f} GiB | {r['estimate_gib']:.1f} GiB | {r['error_percent']:+.1f}% | {note} |")
    for name in ("modelled", "all", "reserved", "allocated"):
        part = result[f"{name}_rows"]
        print(f"\n{name} rows ({part['rows']}): median |error| {part['median_abs_error_percent']}%, "
              f"worst {part['worst_abs_error_percent']}%, worst under-estimate {part['worst_under_percent']}% "
              f"({part['under_estimates']} under)")
    for r in rows:
        if r["known_miss"]:
            print(f"\nknown miss {r['key']}: {r['known_miss']}")


if __name__ == "__main__":
    main()
