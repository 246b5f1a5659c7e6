"""FSDP on a real GPU: Answer.AI's train.py as rank 0 of two (torch's fake process group) on an H200, under a
3090's 24 GiB, and accelerate's FSDP1/FSDP2 path the same way; the caching allocator's own event streams recorded
(benchmarks/gpu_fsdp_answerai.py, gpu_fsdp_accelerate.py; tests/fixtures/allocator_streams/fsdp1; the GPU's peaks
in benchmarks/results/gpu_fsdp_answerai.jsonl and gpu_fsdp_accelerate.jsonl).

The replay model has to give the real reserved peak of every stream; the estimate has to stay close to what the
GPU measured for each published row's settings; and the FSDP ratio in fsdp_reserve.py has to be what the streams
show (benchmarks/fsdp_streams.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from accelwiz.estimate.allocator import replay
from accelwiz.estimate.allocator_stream import events_from_history, read_history
from accelwiz.estimate.fsdp_reserve import BEYOND_WRAP_CACHE, FSDP_DYNAMIC_RATIO
from accelwiz.resolution.stack import Stack

REPO = Path(__file__).resolve().parents[2]
ROWS = [{"ddp": False, **json.loads(line)} for name in ("gpu_fsdp_answerai.jsonl", "gpu_fsdp_accelerate.jsonl")
        for line in (REPO / "benchmarks/results" / name).read_text().splitlines()]
STREAMS = REPO / "tests/fixtures/allocator_streams/fsdp1"


@pytest.fixture(scope="module")
def fsdp_streams():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import fsdp_streams

    return fsdp_streams


@pytest.fixture(scope="module")
def streams(fsdp_streams) -> dict[str, dict]:
    """Each row with what its stream replays to (fsdp_streams.per_stream, seconds a stream) and the estimate of its
    settings, computed once for the module's tests that read every row."""
    rows = {row["key"]: {**row, **fsdp_streams.per_stream(row)} for row in ROWS}
    return {key: {**row, "accelwiz": fsdp_streams.estimate(row)} for key, row in rows.items()}


@pytest.mark.parametrize("row", ROWS, ids=[row["key"] for row in ROWS])
def test_each_fsdp_stream_replays_to_the_reserved_peak_the_gpu_reported(row):
    """Four CUDA streams (default, FSDP's unshard and post-backward, offload's copies), empty_cache after
    loading: the model's reserved peak is the GPU's to the byte."""
    result = replay(events_from_history(read_history(STREAMS / f"{row['key']}.jsonl.gz")))
    assert result.peak_reserved == row["max_reserved"]


def test_the_fsdp_constants_are_the_medians_the_streams_show(fsdp_streams, streams):
    """FSDP_DYNAMIC_RATIO over the large steps, BEYOND_WRAP_CACHE over the small ones (benchmarks/fsdp_streams.py)."""
    import statistics

    rows = list(streams.values())
    large, small = fsdp_streams.split_by_step(rows)
    assert (len(large), len(small)) == (7, 4)
    assert FSDP_DYNAMIC_RATIO[("adapters", True)] == round(statistics.median(r["default_ratio"] for r in large), 2)
    assert round(statistics.median(r["beyond_wrap_cache"] for r in small), 2) == BEYOND_WRAP_CACHE


@pytest.mark.parametrize("row", [r for r in ROWS if r["key"].startswith("answerai")], ids=lambda r: r["key"])
def test_the_estimate_of_each_published_setting_is_close_to_what_the_gpu_measured(row, fsdp_streams):
    """Allocated within 6% of max_memory_allocated (never under by more than 1%); reserved within 8% of
    max_memory_reserved. The 'ddp' rows are FSDP NO_SHARD, which accelwiz estimates as DDP."""
    ours = fsdp_streams.estimate(row)
    assert -1 <= ours["allocated_error_percent"] <= 6, ours
    assert abs(ours["reserved_error_percent"]) <= 8, ours


def test_a_small_step_is_held_up_by_the_cache_wrapping_left(fsdp_streams):
    """At one sequence of 512 tokens the step's dynamic bytes (0.64 GiB) are fewer than what FSDP1's wrapping
    left cached (1.71 GiB for Llama-2-7B LoRA): the estimate names the wrap's cache in the default stream's
    reserve, and lands within 3% of the GPU."""
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.published import PUBLISHED_MEASUREMENTS
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

    row = next(r for r in ROWS if r["key"] == "answerai-llama2-7b-lora-b1-512")
    published = next(r for r in PUBLISHED_MEASUREMENTS if r.key == row["key"])
    today = {**published.workload, "stack": Stack()}  # the H200 ran transformers 5.24
    result = estimate_memory(Workload(resolve_model(published.model), **today), Strategy(**published.strategy))
    assert any("the cache FSDP's wrapping left" in note for note in result.assumptions)
    assert abs(fsdp_streams.estimate(row)["reserved_error_percent"]) <= 3
    assert fsdp_streams.per_stream(row)["wrap_cache"] == pytest.approx(1.71 * 2**30, rel=0.01)


@pytest.mark.parametrize("row", [r for r in ROWS if r["key"].startswith("accel-")], ids=lambda r: r["key"])
def test_accelerates_fsdp_path_is_estimated_close_to_the_gpu(row, fsdp_streams):
    """Full fine-tuning and LoRA, FSDP1 (use_orig_params, so LoRA's flat gradients cover the frozen base; and
    MixedPrecision's side streams) and FSDP2, fp32 parameters with bf16 compute: allocated from -3% to +4%;
    reserved from -5% to +15% (full fine-tuning takes the largest ratio of its streams: the long sequences,
    whose few large blocks fragment least, stay high). The first Llama-3.2-1B rows are of the untied 1.5B model
    that recording built (fsdp_streams._recorded_model)."""
    ours = fsdp_streams.estimate(row)
    assert -3 <= ours["allocated_error_percent"] <= 4, ours
    assert -5 <= ours["reserved_error_percent"] <= 15, ours


def test_full_fine_tuning_under_fsdp_takes_the_largest_ratio_its_streams_show(fsdp_streams, streams):
    """Eight full fine-tuning streams (Llama-3.2-1B, 3B, Llama-2-7B; FSDP1 and FSDP2; 2,048 to 2 x 16,384 tokens):
    the estimate takes the largest default-stream ratio, rounded up, below the single-GPU replays' (ZeRO's)."""
    import math

    from accelwiz.estimate.reserve import DYNAMIC_RATIO

    ratios = fsdp_streams.full_fine_tuning_ratios(list(streams.values()))
    assert len(ratios) == 8
    assert FSDP_DYNAMIC_RATIO[("full", True)] == math.ceil(100 * max(ratios)) / 100 < DYNAMIC_RATIO[("full", True)]


def test_peft_s_offload_setting_reserves_less_on_a_gpu_than_its_page_says(fsdp_streams):
    """PEFT's 70B QLoRA FSDP1 CPU-offload setting (r=8 on every linear, 2 x 2048 tokens), run as rank 0 of two:
    the step reserved 12.1 GiB, which with the runtime beside it is more than 4 GiB under the page's 19.6 GB
    (the known miss is in what the page measured beyond the step), and the estimate is above the GPU's."""
    from accelwiz.estimate.published import PUBLISHED_MEASUREMENTS
    from accelwiz.estimate.runtime import runtime

    row = next(r for r in ROWS if r["key"] == "peft-llama2-70b-qlora-r8-offload-b2-2048")
    published = next(r for r in PUBLISHED_MEASUREMENTS if r.key == fsdp_streams.PUBLISHED_SETTINGS[row["key"]])
    beside = runtime(2, 1, published.gpu, published.cuda_major).total
    assert published.measured_bytes - (row["max_reserved"] + beside) > 4 * 2**30
    ours = fsdp_streams.estimate(row)
    assert 0 <= ours["reserved_error_percent"] <= 15 and 0 <= ours["allocated_error_percent"] <= 6
