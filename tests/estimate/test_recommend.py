"""The recommendation: the fastest strategy that fits, and the largest micro-batch that fits with it."""

from __future__ import annotations

from dataclasses import replace

from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import MODEL_PRESETS
from accelwiz.estimate.recommend import recommend
from accelwiz.estimate.workload import Workload

GIB = 2**30
LLAMA = Workload(MODEL_PRESETS["llama-3.1-8b"], micro_batch=4, seq_len=4096, gradient_checkpointing=True)


def test_picks_the_fastest_that_fits():
    advice = recommend(LLAMA, gpus_per_node=8, gpu_memory_bytes=80 * GIB)
    fitting = [e.strategy for e, fits in advice.candidates if fits]
    assert advice.best is not None and advice.best.strategy == fitting[0]
    first = advice.candidates[0][0]
    assert first.strategy.kind == "ddp" and not advice.candidates[0][1]
    assert advice.reason.startswith(f"{advice.best.strategy.label}: ")
    assert f"DDP would need {first.per_gpu_total / GIB:.1f} GiB" in advice.reason
    for estimate, fits in advice.candidates:
        assert fits == (estimate.per_gpu_total <= 0.9 * 80 * GIB)


def test_max_micro_batch_is_the_largest_that_fits():
    advice = recommend(LLAMA, gpus_per_node=8, gpu_memory_bytes=80 * GIB)
    best, batch = advice.best.strategy, advice.max_micro_batch
    assert batch is not None and batch >= LLAMA.micro_batch
    assert estimate_memory(replace(LLAMA, micro_batch=batch), best).per_gpu_total <= 0.9 * 80 * GIB
    assert estimate_memory(replace(LLAMA, micro_batch=batch + 1), best).per_gpu_total > 0.9 * 80 * GIB


def test_small_model_gets_single_gpu():
    advice = recommend(Workload(MODEL_PRESETS["gpt2"]), gpus_per_node=1, gpu_memory_bytes=24 * GIB)
    assert advice.best.strategy.kind == "single" and "would need" not in advice.reason


def test_nothing_fits():
    advice = recommend(
        Workload(MODEL_PRESETS["llama-3.1-405b"], seq_len=8192), gpus_per_node=1, gpu_memory_bytes=24 * GIB
    )
    assert advice.best is None and advice.max_micro_batch is None
    assert advice.reason.startswith("nothing fits")


def test_host_ram_limits_offload():
    w = Workload(MODEL_PRESETS["llama-3.1-70b"], seq_len=1024, gradient_checkpointing=True)
    roomy = recommend(w, gpus_per_node=8, gpu_memory_bytes=40 * GIB, host_memory_bytes=4096 * GIB)
    tight = recommend(w, gpus_per_node=8, gpu_memory_bytes=40 * GIB, host_memory_bytes=64 * GIB)
    assert roomy.best is not None
    assert tight.best is None or tight.best.host_bytes <= 0.9 * 64 * GIB
