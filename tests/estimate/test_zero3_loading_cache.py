"""ZeRO-3 without zero.Init and with parameter offload: loading's blocks stay reserved beside ZeRO-3's streams
(zero3_loading_cache.py; issue 28, liucongg/ChatGLM-Finetuning's full fine-tuning under ds_zero3_offload.json).

The engine test builds real ZeRO-3 engines on this CPU from a model built outside zero.Init and counts DeepSpeed's
`empty_cache()` calls while it initialises: one (stage3.py `defragment`) where the partitions stay on the device,
none where they are offloaded, so nothing gives loading's freed blocks back. The allocator test runs c10's rule
(allocator.py) that a cached block serves its own stream only; the estimate tests check the reserve that follows."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from accelwiz.estimate.allocator import replay
from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import zero3_gathered_buffer_bytes, zero3_kept_bytes
from accelwiz.estimate.zero3_loading_cache import keeps_loading_cache
from accelwiz.modelspec.lookup import resolve_model
from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from deepspeed.accelerator import get_accelerator
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    accelerator = get_accelerator()
    for offload in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
              "zero_optimization": {"stage": 3, "offload_param": {"device": offload},
                                    "offload_optimizer": {"device": offload}},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}},
              "zero_force_ds_cpu_optimizer": False}
        model = LlamaForCausalLM(LlamaConfig(**config))  # outside zero.Init: a plain deepspeed.initialize loop
        calls = []
        empty = accelerator.empty_cache
        def counted():  # the real call, counted
            calls.append(1)
            return empty()
        accelerator.empty_cache = counted
        engine, *_ = deepspeed.initialize(model=model, config=ds)
        accelerator.empty_cache = empty
        flat = getattr(engine.optimizer, "lp_param_buffer", None)  # defragment's flat buffer of the partitions
        print("EMPTY", offload, len(calls), int(flat is not None), flush=True)
        engine.destroy()
    """
)
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}


@pytest.mark.slow
def test_deepspeed_empties_the_cache_at_initialisation_only_where_the_partitions_stay_on_the_device(
        tmp_path: Path) -> None:
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, ["none", "cpu"], "EMPTY",
                         what="a ZeRO-3 engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    by_device = {device: (int(calls), int(flat)) for device, calls, flat in lines}
    assert by_device["none"] == (1, 1)  # defragment: empty_cache, then one flat buffer on the device
    assert by_device["cpu"] == (0, 0)  # offload_param: no defragment, nothing gives loading's blocks back


def test_a_block_cached_on_one_stream_never_serves_another() -> None:
    freed = [("alloc", "weight", 512 << 20, 0), ("free", "weight")]
    same = replay([*freed, ("alloc", "activation", 256 << 20, 0)])
    other = replay([*freed, ("alloc", "gathered", 256 << 20, 1)])
    assert same.peak_reserved == 512 << 20  # cut from the freed block
    assert other.peak_reserved == (512 + 256) << 20  # a segment of its own beside it


def _glm2(seq_len: int = 1560) -> Workload:
    return Workload(resolve_model("chatglm2-6b"), micro_batch=1, seq_len=seq_len, precision="mixed",
                    gradient_checkpointing=True)


def test_offloaded_parameters_keep_loading_beside_the_gathered_parameters() -> None:
    workload = _glm2()
    strategy = Strategy("zero3", gpus_per_node=4, offload_optimizer="cpu", offload_param="cpu", zero_init=False)
    assert keeps_loading_cache(strategy)
    estimate = estimate_memory(workload, strategy)
    loading = dict(estimate.phases)["loading"]
    gathered = zero3_gathered_buffer_bytes(workload, strategy) + zero3_kept_bytes(workload, strategy)[1]
    bucket = 2 * 500_000_000  # DeepSpeed's reduce bucket: no ChatGLM2 parameter's block is that large
    assert estimate.reserved == pytest.approx(loading + gathered + bucket, rel=1e-6)
    assert any("allgather stream" in a for a in estimate.assumptions)


def test_the_bucket_is_cut_from_a_parameter_block_that_holds_it() -> None:
    workload = _glm2()
    strategy = Strategy("zero3", gpus_per_node=4, offload_optimizer="cpu", offload_param="cpu", zero_init=False,
                        zero_reduce_bucket_size=100_000_000)  # 200 MB: the 532 MB embedding's block holds it
    estimate = estimate_memory(workload, strategy)
    gathered = zero3_gathered_buffer_bytes(workload, strategy) + zero3_kept_bytes(workload, strategy)[1]
    assert estimate.reserved == pytest.approx(dict(estimate.phases)["loading"] + gathered, rel=1e-6)


@pytest.mark.parametrize("change", [{"offload_param": "none", "offload_optimizer": "none"}, {"zero_init": True}])
def test_loading_is_weighed_as_before_where_its_blocks_go_back_or_were_never_whole(change: dict) -> None:
    workload = _glm2()
    offloaded = Strategy("zero3", gpus_per_node=4, offload_optimizer="cpu", offload_param="cpu", zero_init=False)
    strategy = replace(offloaded, **change)
    assert not keeps_loading_cache(strategy)
    estimate = estimate_memory(workload, strategy)
    loading = dict(estimate.phases)["loading"]
    assert estimate.reserved == pytest.approx(max(estimate.step_reserved, loading), rel=1e-6)
    assert not any("allgather stream" in a for a in estimate.assumptions)
