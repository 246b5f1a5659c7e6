"""ZeRO-1/2's flat 16-bit copy at loading: DeepSpeed makes it on the GPU beside the parameters where the GPU has
room for it, and on the CPU where it has not (zero_flatten.py; 01-ai/Yi's 34B under ZeRO-2 on 80 GB
cards was judged on a 128 GiB loading peak it never has)."""

from __future__ import annotations

import inspect

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.verdict import gpu_verdict
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import resolve_model

GIB = 2**30


def test_deepspeed_flattens_on_the_gpu_only_where_the_buffer_fits():
    """The installed DeepSpeed's own rule, read where it decides (stage_1_and_2.py `__init__`)."""
    stage = pytest.importorskip("deepspeed.runtime.zero.stage_1_and_2")
    source = inspect.getsource(stage.DeepSpeedZeroOptimizer.__init__)
    assert "flatten_on_accelerator = (accelerator.is_available() and (available_memory >= flat_buffer_bytes))" \
        in source
    assert "param.cpu_data = param.data.cpu()" in source  # else: the parameters go to the CPU to be flattened


def _estimate():
    workload = Workload(resolve_model("llama-2-70b"), precision="mixed", micro_batch=1, seq_len=2048,
                        gradient_checkpointing=True)
    return estimate_memory(workload, Strategy("zero2", gpus_per_node=8, offload_optimizer="cpu"))


def test_a_gpu_without_room_for_the_flat_copy_loads_one_copy():
    estimate = _estimate()
    loading = dict(estimate.phases)["loading"]
    assert estimate.zero_flatten == pytest.approx(2 * 68_976_648_192, rel=1e-3)  # the 16-bit trainable model
    assert estimate.peak_phase == "loading"
    small = 160 * GIB  # holds the 16-bit model and the step, not a second copy beside the model
    assert loading + estimate.runtime > small and estimate.flattens_on_cpu(small)
    on_cpu = estimate.with_cpu_flatten()
    assert dict(on_cpu.phases)["loading"] == loading - estimate.zero_flatten
    assert estimate.need_on(small) == on_cpu.need_on(small) < estimate.per_gpu_total
    verdict = gpu_verdict(estimate, small)
    assert verdict.need < estimate.per_gpu_total and "flattens ZeRO's 16-bit parameter buffer on the CPU" in \
        verdict.describe()


def test_a_gpu_with_room_flattens_there_and_is_judged_on_it():
    estimate = _estimate()
    big = 400 * GIB
    assert not estimate.flattens_on_cpu(big)
    assert estimate.need_on(big) == estimate.per_gpu_total == gpu_verdict(estimate, big).need
