"""Where ZeRO-1/2 flattens the 16-bit parameters, by DeepSpeed release (zero_flatten.py): always on the CPU before
0.18.7 (0.12.6 stage_1_and_2.py:319 `move_to_cpu` first), from 0.18.7 on the GPU where its free memory holds the
flat buffer. A real ZeRO-2 engine on this CPU, its accelerator's free memory set on each side of the buffer, takes
the path the rule says, to the byte. 01-ai/Yi#249 (Yi-34B, ZeRO-2 on 80 GB) was compared at a loading peak that
counted the flat copy on the GPU while its verdict said the CPU: +61.4 % -> -14.4 %."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero_flatten import FIRST_FLATTEN_ON_GPU, ZeroFlatten
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from tests.estimate.deepspeed_engine import TINY_LLAMA, engine_lines

GIB = 2**30

# One ZeRO-2 bf16 engine per setting [the accelerator's available_memory()], the flatten recorded where DeepSpeed
# makes it (`use_cpu_data`: built from the host copies): prints FLAT available cpu|accelerator buffer-bytes.
FLAT_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from deepspeed.accelerator import get_accelerator
    from deepspeed.runtime.zero.stage_1_and_2 import DeepSpeedZeroOptimizer
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    made = []
    flatten = DeepSpeedZeroOptimizer.flatten_dense_tensors_aligned
    def recording(self, tensor_list, alignment, use_cpu_data=False, **kwargs):
        flat = flatten(self, tensor_list, alignment, use_cpu_data=use_cpu_data, **kwargs)
        made.append((use_cpu_data, flat.numel() * flat.element_size()))
        return flat
    DeepSpeedZeroOptimizer.flatten_dense_tensors_aligned = recording
    accelerator = get_accelerator()
    for available in json.loads(sys.argv[2]):
        accelerator.available_memory = lambda device_index=None: available
        made.clear()
        model = LlamaForCausalLM(LlamaConfig(**config))
        ds = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, "bf16": {"enabled": True},
              "zero_force_ds_cpu_optimizer": False}
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds)
        (on_cpu, size), = made
        print("FLAT", available, "cpu" if on_cpu else "accelerator", size, flush=True)
        engine.destroy()
    """
)


@pytest.mark.slow
def test_a_real_engine_flattens_where_the_rule_says_at_the_byte(tmp_path: Path) -> None:
    from importlib.metadata import version

    from accelwiz.probe.versions import release_tuple

    pytest.importorskip("deepspeed")
    installed = release_tuple(version("deepspeed"))
    if installed is None or installed < FIRST_FLATTEN_ON_GPU:
        pytest.skip("the installed DeepSpeed flattens on the CPU whatever the memory")
    workload = Workload(spec_from_hf_config(TINY_LLAMA, name="tiny", source="test"), precision="bf16")
    strategy = Strategy("zero2")
    flatten = estimate_memory(workload, strategy).flatten
    assert flatten is not None and flatten.flat == 2 * workload.trainable_parameters
    rule = ZeroFlatten(flatten.flat, 0.0, 0.0, installed)  # the engine's free memory is said outright
    settings = [int(flatten.flat), int(flatten.flat) - 1, 2 * int(flatten.flat)]
    lines = engine_lines(tmp_path, FLAT_ENGINE, TINY_LLAMA, settings, "FLAT",
                         what="a ZeRO-2 engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    for (available, where, size), said in zip(lines, settings, strict=True):
        assert int(available) == said and int(size) == flatten.flat  # no alignment padding on this model
        assert (where == "accelerator") == rule.on_gpu(said), (said, where)
    assert [where for _, where, _ in lines] == ["accelerator", "cpu", "accelerator"]


def test_the_installed_release_has_the_rule_it_is_modelled_with():
    """From 0.18.7 the installed stage_1_and_2.py weighs the free memory against the buffer; before, it has no such
    check (moves each group to the CPU first)."""
    from importlib.metadata import version

    from accelwiz.probe.versions import release_tuple

    stage = pytest.importorskip("deepspeed.runtime.zero.stage_1_and_2")
    source = inspect.getsource(stage.DeepSpeedZeroOptimizer.__init__)
    checks = "available_memory >= flat_buffer_bytes" in source or "available_vram >= flat_buffer_bytes" in source
    assert checks == (release_tuple(version("deepspeed")) >= FIRST_FLATTEN_ON_GPU)


@pytest.mark.parametrize("release", [(0, 8, 3), (0, 12, 6), (0, 14, 4), (0, 18, 6)])
def test_before_0_18_7_every_release_flattens_on_the_cpu(release):
    flatten = ZeroFlatten(10 * GIB, 10 * GIB, GIB // 2, release)
    assert not flatten.on_gpu(None) and not flatten.on_gpu(400 * GIB)
    assert flatten.gpu_bytes(400 * GIB) == 0
    assert not flatten.lacks_room(20 * GIB)  # the release's way, not the GPU's size: no verdict note
    assert "before 0.18.7" in flatten.why(400 * GIB)


@pytest.mark.parametrize("release", [(0, 18, 7), (0, 19, 0), (0, 19, 8)])
def test_from_0_18_7_the_gpu_where_its_free_memory_holds_the_buffer(release):
    flatten = ZeroFlatten(10 * GIB, 10 * GIB, GIB // 2, release)
    room = 20 * GIB + GIB // 2  # the loaded weights, the context and NCCL, and the buffer: exactly
    assert flatten.on_gpu(room) and flatten.gpu_bytes(room) == 10 * GIB and not flatten.lacks_room(room)
    assert not flatten.on_gpu(room - 1) and flatten.gpu_bytes(room - 1) == 0 and flatten.lacks_room(room - 1)
    assert flatten.on_gpu(None)  # an unknown GPU: where it fits assumed, the larger loading
    assert "it fits" in flatten.why(room) and "flatten_on_accelerator false" in flatten.why(room - 1)


def test_the_stack_says_the_release_and_the_estimate_counts_one_copy_before_0_18_7():
    from accelwiz.resolution.stack import Stack

    def on(release):
        workload = Workload(resolve_model("llama-2-13b"), precision="mixed", micro_batch=1, seq_len=512,
                            gradient_checkpointing=True, stack=Stack(deepspeed=release))
        return workload, estimate_memory(workload, Strategy("zero2", gpus_per_node=8, offload_optimizer="cpu"),
                                         "A100-80GB")

    (workload, today), (_, old) = on((0, 19, 8)), on((0, 12, 6))
    weights = 2 * workload.trainable_parameters
    assert today.zero_flatten == pytest.approx(weights) and old.zero_flatten == 0
    assert dict(today.phases)["loading"] - dict(old.phases)["loading"] == pytest.approx(weights, abs=1)
    assert today.peak_phase == "loading" and old.peak_phase != "loading"
