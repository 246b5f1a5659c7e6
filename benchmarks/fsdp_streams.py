"""FSDP1's real allocator streams, taken apart per CUDA stream, and accelwiz's estimate beside each (no GPU needed).

The streams were recorded on an H200 by benchmarks/gpu_fsdp_session.sh (Answer.AI's train.py as rank 0 of two,
benchmarks/gpu_fsdp_answerai.py) and live in tests/fixtures/allocator_streams/fsdp1; the peaks the GPU reported
are in benchmarks/results/gpu_fsdp_answerai.jsonl. For each stream this replays the events through the
caching-allocator model (accelwiz/estimate/allocator.py) and reports:

* what each CUDA stream reserved, and the default stream's allocated peak after wrapping;
* the cache wrapping left (reserved − allocated after wrapping) and the default stream's dynamic ratio
  (reserved − static) / (allocated peak − static), static being what was allocated after wrapping;
* accelwiz's allocated and reserved estimate for the published row's settings against the GPU's peaks.

`FSDP_DYNAMIC_RATIO` (accelwiz/estimate/fsdp_reserve.py) is the median default-stream ratio over the published
FULL_SHARD settings whose dynamic bytes pass 1.5 x the wrap's cache (`split_by_step`); `BEYOND_WRAP_CACHE` the
median share of the dynamic bytes the others (small steps) still took in new segments beside that cache.
Writes benchmarks/results/fsdp_streams.json and prints a Markdown table.
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RESULTS = REPO / "benchmarks" / "results"
STREAMS = REPO / "tests" / "fixtures" / "allocator_streams" / "fsdp1"
GIB = 2**30
# rows recorded at a published row's settings under another key: PEFT's settings (LoRA r=8 on every linear) run
# through Answer.AI's train.py path, which is what PEFT's FSDP QLoRA guide does on rank 0 (bf16, no MixedPrecision)
PUBLISHED_SETTINGS = {"peft-llama2-70b-qlora-r8-offload-b2-2048": "peft-llama2-70b-qlora-fsdp-2gpu-offload"}


def measured_rows() -> list[dict]:
    """Answer.AI's settings (and variants), then accelerate's path (benchmarks/gpu_fsdp_accelerate.py)."""
    rows = []
    for name in ("gpu_fsdp_answerai.jsonl", "gpu_fsdp_accelerate.jsonl"):
        rows += [json.loads(line) for line in (RESULTS / name).read_text().splitlines() if line]
    return [{"ddp": False, **row} for row in rows]


def per_stream(row: dict) -> dict:
    """Each CUDA stream's reserved bytes, and the default stream's allocated peak once training started."""
    from accelwiz.estimate.allocator import CachingAllocator
    from accelwiz.estimate.allocator_stream import events_from_history, read_history

    entries = read_history(STREAMS / f"{row['key']}.jsonl.gz")
    allocator, live = CachingAllocator(), {}
    allocated, peak = collections.Counter(), collections.Counter()
    tokens, training = row["batch"] * row["seq"] * 8, False
    for event in events_from_history(entries):
        if event[0] == "alloc":
            block = live[event[1]] = allocator.malloc(event[2], event[3])
            allocator.hint = None
            # the step's first tensor (the token ids) is allocated right after wrapping, as train.py does
            training = training or (event[2] == tokens and allocator.reserved == row["reserved_after_wrap"])
            allocated[event[3]] += block.size
            if training:
                peak[event[3]] = max(peak[event[3]], allocated[event[3]])
        elif event[0] == "free":
            block = live.pop(event[1])
            allocated[block.stream] -= block.size
            allocator.free(block)
        elif event[0] == "segment":
            allocator.hint = event[1:]
        else:
            allocator.empty_cache()
    reserved = collections.Counter()
    for action, _, size, stream in entries:
        reserved[stream] += size if action == "segment_alloc" else -size if action == "segment_free" else 0
    static = row["allocated_after_wrap"]
    default_reserved, default_peak = reserved[0], peak[0]
    return {
        "default_reserved": default_reserved,
        "default_allocated_peak": default_peak,
        "other_streams_reserved": sum(v for s, v in reserved.items() if s),
        "wrap_cache": row["reserved_after_wrap"] - static,
        "default_ratio": round((default_reserved - static) / (default_peak - static), 3),
        # what the step took in new segments beside the wrap's cache, per byte of its dynamic bytes
        "beyond_wrap_cache": round((default_reserved - row["reserved_after_wrap"]) / (default_peak - static), 3),
        "dynamic": default_peak - static,
    }


def split_by_step(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The published settings under FULL_SHARD (one stream each: not the NO_SHARD 'ddp' rows, not the repeats with
    other checkpointing or without FSDP), split into large steps (dynamic bytes beyond 1.5 x the wrap's cache)
    and small ones."""
    fsdp = [r for r in rows if r["key"].startswith("answerai") and not r["ddp"]]
    large = [r for r in fsdp if r["dynamic"] > 1.5 * r["wrap_cache"]]
    return large, [r for r in fsdp if r not in large]


# recorded before gpu_fsdp_accelerate.py tied the weights again after `to_empty` (which unties Llama-3.2-1B's
# embedding and LM head): these runs trained an untied, 1.50B-parameter model, their root unit holding both
UNTIED_RECORDINGS = {"accel-llama32-1b-full-fsdp1-b4-2048", "accel-llama32-1b-full-fsdp2-b4-2048"}


def _recorded_model(row: dict):
    """The model the recorded run trained (see UNTIED_RECORDINGS)."""
    from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config

    if row["key"] not in UNTIED_RECORDINGS:
        return resolve_model(row["model"])
    from gpu_fsdp_accelerate import LLAMA32_1B

    return spec_from_hf_config({"model_type": "llama", **LLAMA32_1B, "tie_word_embeddings": False},
                               name="llama-3.2-1b (untied, as recorded)", source="benchmarks/gpu_fsdp_accelerate.py")


def estimate(row: dict) -> dict | None:
    """accelwiz's figures for the published row's settings (None for the variants no row publishes)."""
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.published import PUBLISHED_MEASUREMENTS
    from accelwiz.estimate.runtime import runtime
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.stack import Stack

    published = {r.key: r for r in PUBLISHED_MEASUREMENTS}.get(PUBLISHED_SETTINGS.get(row["key"], row["key"]))
    if row["key"].startswith("accel-"):  # accelerate's path: `mixed_precision: bf16`, checkpointing, PEFT r=16
        strategy = Strategy("fsdp_full", gpus_per_node=2, fsdp_version=row["fsdp"])
        workload = Workload(_recorded_model(row), micro_batch=row["batch"], seq_len=row["seq"],
                            regime=row["regime"], gradient_checkpointing=True, precision="mixed")
        published_gib = None
    elif published is None:
        return None
    else:  # the H200 ran today's transformers (5.24), not the row's 2024 one
        strategy = Strategy(**published.strategy)
        workload = Workload(resolve_model(published.model), **{**published.workload, "stack": Stack()})
        published_gib = round(published.measured_bytes / GIB, 2)
    result = estimate_memory(workload, strategy, gpu="NVIDIA H200")
    cublas = runtime(strategy.world_size, strategy.nodes, "NVIDIA H200").cublas  # from the allocator too
    return {"allocated": result.allocated, "reserved": result.reserved + cublas,
            "allocated_error_percent": round(100 * (result.allocated / row["max_allocated"] - 1), 1),
            "reserved_error_percent": round(100 * ((result.reserved + cublas) / row["max_reserved"] - 1), 1),
            "published_gib": published_gib, "strategy": strategy.short_label,
            "optimizer_states": result.optimizer_states}


def full_fine_tuning_ratios(rows: list[dict]) -> list[float]:
    """The default stream's ratio for accelerate's full fine-tuning rows, with the Adam states (allocated on the
    default stream at the first step, exact in the estimate) counted static as the estimator counts them."""
    ratios = []
    for row in rows:
        if row["key"].startswith("accel-") and row["regime"] == "full":
            static = row["allocated_after_wrap"] + row["accelwiz"]["optimizer_states"]
            ratios.append(round((row["default_reserved"] - static) / (row["default_allocated_peak"] - static), 3))
    return ratios


def main() -> None:
    rows = []
    for row in measured_rows():
        rows.append({**row, **per_stream(row), "accelwiz": estimate(row)})
    large, small = split_by_step(rows)
    above, beneath = [r["default_ratio"] for r in large], [r["beyond_wrap_cache"] for r in small]
    estimated = [r for r in rows if r["accelwiz"] and r["key"].startswith("answerai")]
    summary = {
        "fsdp_default_ratio_median": round(statistics.median(above), 2),
        "fsdp_default_ratio_streams": len(above),
        "fsdp_beyond_wrap_cache_median": round(statistics.median(beneath), 2),
        "fsdp_beyond_wrap_cache_streams": len(beneath),
        "fsdp_full_fine_tuning_ratios": full_fine_tuning_ratios(rows),
        "reserved_median_abs_error_percent": statistics.median(abs(r["accelwiz"]["reserved_error_percent"])
                                                               for r in estimated),
        "reserved_worst_under_percent": min(r["accelwiz"]["reserved_error_percent"] for r in estimated),
        "allocated_median_abs_error_percent": statistics.median(abs(r["accelwiz"]["allocated_error_percent"])
                                                                for r in estimated),
    }
    (RESULTS / "fsdp_streams.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    print("| setting (H200, rank 0 of 2) | wrap cache | FSDP streams | default ratio | max allocated | accelwiz "
          "| max reserved | accelwiz | published |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ours = r["accelwiz"]
        mine = (f"{ours['allocated'] / GIB:.2f} ({ours['allocated_error_percent']:+.1f}%)",
                f"{ours['reserved'] / GIB:.2f} ({ours['reserved_error_percent']:+.1f}%)",
                f"{ours['published_gib']:.2f}" if ours["published_gib"] else "") if ours else ("", "", "")
        print(f"| {r['key']} | {r['wrap_cache'] / GIB:.2f} | {r['other_streams_reserved'] / GIB:.2f} "
              f"| {r['default_ratio']:.2f} | {r['max_allocated'] / GIB:.2f} | {mine[0]} "
              f"| {r['max_reserved'] / GIB:.2f} | {mine[1]} | {mine[2]} |")
    print("\n" + json.dumps(summary))


if __name__ == "__main__":
    main()
