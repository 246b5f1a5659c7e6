"""The analytic reserve is what the allocator replays taught, and a traced step replays to a reserved peak."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.reserve import DYNAMIC_RATIO, STEP_PEAK_RATIO
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "allocator_replay.json"


def test_the_ratios_are_the_medians_of_the_replays() -> None:
    rows = json.loads(RESULTS.read_text())["rows"]
    groups: dict[object, list[float]] = {}
    for row in rows:
        kind = "full" if row["regime"] == "full" else "adapters"
        key = "step" if kind == "full" and row["peak_phase"] == "optimizer" else (kind, row["gradient_checkpointing"])
        groups.setdefault(key, []).append(row["dynamic_ratio"])
    assert STEP_PEAK_RATIO == pytest.approx(statistics.median(groups.pop("step")), abs=5e-4)
    assert set(groups) == set(DYNAMIC_RATIO)
    for key, ratios in groups.items():
        assert DYNAMIC_RATIO[key] == pytest.approx(statistics.median(ratios), abs=5e-4), key


@pytest.mark.parametrize("model", ["qwen2.5-7b", "llama-3.2-1b"])
def test_checkpointing_never_raises_a_step_that_peaks_in_the_optimizer(cli, model) -> None:
    """At 512 tokens the optimizer step is the peak of full fine-tuning; checkpointing frees activations and
    cannot add to it (the step-peak replays hold one ratio with and without it)."""
    def total(*flags: str) -> int:
        result = cli("estimate", "--model", model, "--gpus", "1", "--gpu-memory", "80GiB", "--strategy", "single",
                     "--seq-len", "512", *flags, "--format", "json")
        return json.loads(result.stdout)["estimate"]["per_gpu_bytes"]["total"]

    assert total("--gradient-checkpointing") <= total()


def test_reserved_is_at_least_allocated_and_the_total_adds_the_runtime() -> None:
    workload = Workload(resolve_model("llama-3.1-8b"), micro_batch=2, seq_len=2048, regime="lora",
                        gradient_checkpointing=True)
    estimate = estimate_memory(workload, Strategy("fsdp_full", gpus_per_node=8), gpu="NVIDIA H100 80GB HBM3")
    assert estimate.allocated < estimate.reserved < estimate.per_gpu_total
    assert estimate.per_gpu_total == estimate.reserved + estimate.runtime
    assert dict(estimate.runtime_parts)["nccl"] > 0


def test_a_traced_step_replays_to_a_reserved_peak_per_phase() -> None:
    """The fake-tensor trace records every allocation and free; the replay's reserved peak is above the
    allocated one (rounding, cached blocks) and never falls from one phase to the next."""
    from accelwiz.estimate.trace import TraceSettings, trace_training_step
    from accelwiz.estimate.trace_model import config_from_dict

    config = config_from_dict({"model_type": "gpt2", "vocab_size": 1000, "n_embd": 128, "n_layer": 2,
                               "n_head": 4, "n_positions": 256}, source="test")
    trace = trace_training_step(config, TraceSettings(micro_batch=2, seq_len=128, gradient_checkpointing=True))
    replay = trace.allocator
    assert trace.reserved >= replay["allocated"] >= trace.peak
    assert replay["reserved_forward"] <= replay["reserved_backward"] <= replay["reserved_optimizer"]
    assert trace.as_dict()["reserved"] == trace.reserved


def test_json_peak_has_allocated_reserved_runtime_and_the_device(cli) -> None:
    result = cli("estimate", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "fsdp_full", "--lora",
                 "--gradient-checkpointing", "--gpu-memory", "80GiB", "--format", "json")
    data = json.loads(result.stdout)
    peak = data["estimate"]["peak"]
    assert peak["allocated"] < peak["reserved"] and peak["total"] == peak["reserved"] + peak["runtime"]
    assert peak["runtime"] == sum(peak["runtime_parts"].values()) and peak["runtime_parts"]["nccl"] > 0
    assert peak["device_total"] == 80 * 2**30
    assert peak["phase"]["allocated"] in ("forward", "backward", "optimizer")
    per_gpu = data["estimate"]["per_gpu_bytes"]
    assert per_gpu["total"] == peak["total"] == sum(v for k, v in per_gpu.items() if k != "total")


def test_the_verdict_judges_reserved_plus_runtime(cli) -> None:
    """A GPU that holds the allocated peak and the runtime but not the whole reserve is tight (the caching
    allocator releases its cache and retries before it fails), with that reason; one that does not hold the
    allocated peak plus the runtime does not fit."""
    workload = Workload(resolve_model("llama-3.2-1b"), micro_batch=8, seq_len=2048)
    estimate = estimate_memory(workload, Strategy("single"))
    held = estimate.allocated + estimate.runtime
    between = (held + estimate.per_gpu_total) // 2
    args = ("estimate", "--model", "llama-3.2-1b", "--micro-batch", "8", "--strategy", "single", "--gpu-memory")
    result = cli(*args, f"{between // 2**20}MiB")
    assert result.exit_code == 0 and "tight" in result.stdout and "release its cache and retry" in result.stdout
    result = cli(*args, f"{(held - 2**30) // 2**20}MiB")
    assert result.exit_code == 1 and "does not fit" in result.stdout
