"""ZeRO-3's gathered parameters across the forward→backward turn, against a real DeepSpeed engine on this CPU.

DeepSpeed (partitioned_param_coordinator.py, 0.19.8) keeps a module's parameters gathered after it runs when they
are used again within `stage3_max_reuse_distance` elements of the recorded module trace; the last modules of
forward are the first of backward, so they stay gathered across the turn. memory.py replays that rule on the
module order (`zero3_gathered_working_set`); the engine test counts the gathered parameters DeepSpeed really
holds after forward (and at every module's forward, recomputation included) for several reuse distances, with
and without gradient checkpointing.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from accelwiz.estimate.configured_strategy import strategy_from_effective
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import zero3_gathered_working_set
from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for reuse, checkpointing in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
              "zero_optimization": {"stage": 3, "stage3_max_reuse_distance": reuse,
                                    "stage3_prefetch_bucket_size": 0},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}}
        model = LlamaForCausalLM(LlamaConfig(**config))
        if checkpointing:
            model.gradient_checkpointing_enable()
        engine, *_ = deepspeed.initialize(model=model, config=ds)
        engine.train()
        gathered = lambda: sum(p.ds_numel for p in engine.module.parameters()
                               if p.ds_status == ZeroParamStatus.AVAILABLE and not p.ds_persist)
        most = [0]
        hooks = [m.register_forward_pre_hook(lambda *_: most.__setitem__(0, max(most[0], gathered())))
                 for m in engine.module.modules()]
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        for step in range(3):  # the trace is recorded in the first step and replayed from the second
            most[0] = 0
            loss = engine(input_ids=ids, labels=ids).loss
            turn = gathered()
            engine.backward(loss)
            engine.step()
        print("GATHERED", reuse, int(checkpointing), turn, most[0], flush=True)
        engine.destroy()
    """
)
# every linear above the persistence threshold (1e5 elements), the norms below it
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 512, "intermediate_size": 1024,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
               "tie_word_embeddings": False}
_SETTINGS = [(1_000_000, False), (3_000_000, False), (6_000_000, False), (20_000_000, False),
             (1_000_000, True), (3_000_000, True)]


@pytest.mark.slow
def test_gathered_parameters_equal_a_real_zero3_engines(tmp_path):
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, _SETTINGS, "GATHERED", what="a ZeRO-3 engine")
    measured = {(int(reuse), bool(int(gc))): (int(turn), int(most)) for reuse, gc, turn, most in lines}
    spec = spec_from_hf_config(_TINY_LLAMA, name="tiny", source="test")
    for (reuse, checkpointing), (turn, most) in measured.items():
        workload = Workload(spec, precision="fp32", gradient_checkpointing=checkpointing)
        ours = zero3_gathered_working_set(workload, Strategy("zero3", zero3_max_reuse_distance=reuse))
        assert ours.turn == 4 * turn, (reuse, checkpointing)  # fp32: 4 bytes per gathered element
        # the engine looks at forward hooks only (recomputation included); the replay sees backward too
        assert 4 * most <= ours.peak, (reuse, checkpointing)
        if not checkpointing:
            assert ours.peak == 4 * most, reuse
    # the settings are not all alike: the reuse distance decides how much stays gathered
    assert len({turn for turn, _ in measured.values()}) >= 3


def test_reuse_distance_zero_keeps_nothing_across_the_turn():
    workload = Workload(resolve_model("llama-3.2-1b"), micro_batch=1, seq_len=2048)
    released = zero3_gathered_working_set(workload, Strategy("zero3", zero3_max_reuse_distance=0))
    assert released.turn == 0.0 and released.peak == released.largest_module
    default = zero3_gathered_working_set(workload, Strategy("zero3"))
    # DeepSpeed's default 1e9 elements: the tied LM head (the embedding, 2.6e8) and the last layers' modules
    # whose reuse comes back within 1e9 elements, forward and backward together (about 5e8 elements)
    assert default.largest_module < default.turn <= 2 * (5e8 + workload.model.largest_layer_parameters)
    # without prefetching the reuse distance alone decides what stays gathered
    unfetched = [estimate_memory(workload, Strategy("zero3", gpus_per_node=8, zero3_max_reuse_distance=reuse,
                                                    zero3_prefetch_bucket_size=0)) for reuse in (0, 10**9, 10**10)]
    assert unfetched[0].allocated < unfetched[1].allocated < unfetched[2].allocated
    assert any("stay gathered" in line for line in unfetched[2].assumptions)
    assert not any("stay gathered" in line for line in unfetched[0].assumptions)
    # with DeepSpeed's default prefetch the gathered set fills to max_live_parameters (1e9 of 1.24e9 elements)
    # whatever the reuse distance; a distance over the whole model keeps all of it (test_zero3_max_live_engine.py)
    fetched = [estimate_memory(workload, Strategy("zero3", gpus_per_node=8, zero3_max_reuse_distance=reuse))
               for reuse in (0, 10**9, 10**10)]
    assert unfetched[1].allocated < fetched[0].allocated == fetched[1].allocated < fetched[2].allocated


def test_gradient_checkpointing_changes_what_stays_gathered():
    spec = resolve_model("llama-3.2-1b")
    plain = Workload(spec, micro_batch=1, seq_len=2048)
    checkpointed = replace(plain, gradient_checkpointing=True)
    strategy = Strategy("zero3", zero3_max_reuse_distance=10**9)
    # the recomputed layer comes between a last layer's forward and its backward: less is kept at the turn
    assert zero3_gathered_working_set(checkpointed, strategy).turn < zero3_gathered_working_set(plain, strategy).turn


def test_a_deepspeed_json_sets_the_coordinator_limits():
    text = json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {
        "stage": 3, "stage3_max_reuse_distance": 0, "stage3_max_live_parameters": 3e8,
        "stage3_prefetch_bucket_size": "auto"}})
    strategy = strategy_from_effective(resolve(None, parse_text(text, Path("ds.json"), kind="deepspeed")))
    assert strategy is not None
    assert (strategy.zero3_max_reuse_distance, strategy.zero3_max_live_parameters) == (0, 300_000_000)
    # "auto": the HF Trainer and accelerate fill it from the hidden size (tests/estimate/test_zero_buckets.py)
    assert strategy.zero3_prefetch_bucket_size == "auto"
    defaults = strategy_from_effective(resolve(None, parse_text(
        json.dumps({"zero_optimization": {"stage": 3}}), Path("ds.json"), kind="deepspeed")))
    assert defaults == Strategy("zero3")
    # micro-batch 2: the peak is in backward, where the reuse distance matters (at 1 it is the optimizer step);
    # on 8 ranks, where a gathered parameter is a copy (on one rank without offload it is its partition)
    workload = Workload(resolve_model("llama-3.2-1b"), micro_batch=2, seq_len=2048)
    assert (estimate_memory(workload, replace(strategy, gpus_per_node=8)).allocated
            < estimate_memory(workload, replace(defaults, gpus_per_node=8)).allocated)
    assert estimate_memory(workload, strategy).allocated == estimate_memory(workload, defaults).allocated
