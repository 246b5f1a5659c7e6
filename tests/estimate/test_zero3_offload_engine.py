"""ZeRO-3 with parameter and optimizer CPU offload, as the MiniCPM finetune scripts run it, against a real
DeepSpeed engine on this CPU (issue 28's frozen MiniCPM misses).

The engine runs the scripts' configuration in small: a tied-embedding Llama (MiniCPM ties its LM head), ZeRO-3 with
`offload_param` and `offload_optimizer` on the CPU, a torch AdamW handed to DeepSpeed (the Trainer's run gets
DeepSpeedCPUAdam from accelerate; either steps on the host, which this test does not measure), full fine-tuning and
PEFT LoRA r=8 on q_proj/v_proj (and one full run without offload), and two evaluation forwards (`model.eval()`, no
gradient) after every training step, as the Trainer's `eval_steps` interleave them. It prints, per setting: the
parameters gathered at the forward→backward turn, the most gathered after an evaluation forward, the largest
gradient DeepSpeed reduces (`reduce_ready_partitions_and_remove_grads`), how many reduced gradients belong to frozen
parameters, and how many gathered parameters were copies of their partitions. What the estimate relies on follows:

* without prefetching (this engine's bucket is 0), evaluation between steps leaves exactly the turn's parameters
  gathered (the trace stays complete; nothing accumulates); with it, the next step can hold about twice
  `stage3_max_live_parameters` (docs/performance.md; the prefetch hold itself: test_zero3_max_live_engine.py);
* the release-rule replay (`zero3_gathered_working_set`) equals the engine's turn under offload with a tied
  head; under LoRA it is an upper bound (see the LoRA test);
* a frozen module has no gradient: under LoRA the largest module is gathered without one
  (`zero3_gathered_buffer_bytes`);
* one rank without parameter offload gathers in place: a gathered parameter is its partition, no copy.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import (
    zero3_gathered_buffer_bytes,
    zero3_gathered_working_set,
    zero3_kept_bytes,
)
from accelwiz.modelspec.lookup import spec_from_hf_config
from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for regime, reuse, offload in json.loads(sys.argv[2]):
        zero = {"stage": 3, "stage3_prefetch_bucket_size": 0, "stage3_max_reuse_distance": reuse,
                "reduce_bucket_size": 4096, "stage3_param_persistence_threshold": 10 * config["hidden_size"]}
        if offload:
            zero["offload_param"] = {"device": "cpu", "pin_memory": False}
            zero["offload_optimizer"] = {"device": "cpu", "pin_memory": False}
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": zero,
              "zero_allow_untested_optimizer": True, "zero_force_ds_cpu_optimizer": False}
        model = LlamaForCausalLM(LlamaConfig(**config))
        if regime == "lora":
            from peft import LoraConfig, get_peft_model
            model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, lora_dropout=0.1,
                                                     target_modules=["q_proj", "v_proj"]))
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds)
        reduce = engine.optimizer.reduce_ready_partitions_and_remove_grads
        reduced = []
        def spy(param):
            reduced.append((param.requires_grad, param.grad.numel()))
            return reduce(param)
        engine.optimizer.reduce_ready_partitions_and_remove_grads = spy
        gathered = lambda: sum(p.ds_numel for p in engine.module.parameters()
                               if p.ds_status == ZeroParamStatus.AVAILABLE and not p.ds_persist)
        # one rank: is every gathered parameter its own partition (the same storage), or a copy of it?
        copies = [0]
        def count_copies(*_):
            copies[0] += sum(1 for p in engine.module.parameters() if p.ds_status == ZeroParamStatus.AVAILABLE
                             and p.data.untyped_storage().data_ptr() != p.ds_tensor.untyped_storage().data_ptr())
        hooks = [m.register_forward_hook(count_copies) for m in engine.module.modules()]
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        turns, evals = [], []
        for step in range(3):  # the trace is recorded in the first step and replayed from the second
            engine.train()
            loss = engine(input_ids=ids, labels=ids).loss
            turns.append(gathered())
            engine.backward(loss)
            engine.step()
            engine.eval()
            with torch.no_grad():
                for _ in range(2):
                    engine(input_ids=ids, labels=ids)
                    evals.append(gathered())
        frozen = sum(1 for trainable, _ in reduced if not trainable)
        print("ZERO3OFFLOAD", regime, reuse, int(offload), turns[-1], max(evals[2:]), max(n for _, n in reduced),
              frozen, copies[0], flush=True)
        engine.destroy()
    """
)
# the embedding (tied LM head, 1.02M elements) is the largest module, as MiniCPM's (283M) is
_TIED = {"model_type": "llama", "vocab_size": 4000, "hidden_size": 256, "intermediate_size": 1024,
         "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4, "tie_word_embeddings": True}
_SETTINGS = [("full", 3_000_000, True), ("lora", 3_000_000, True), ("full", 10**9, True), ("lora", 10**9, True),
             ("full", 10**9, False)]


def _workload(regime: str) -> Workload:
    spec = spec_from_hf_config(_TIED, name="tied", source="test")
    return Workload(spec, precision="fp32", regime=regime, lora_rank=8, lora_targets=("q_proj", "v_proj"))


def _strategy(reuse: int, offload: str = "cpu") -> Strategy:
    return Strategy("zero3", offload_optimizer=offload, offload_param=offload, zero3_max_reuse_distance=reuse,
                    zero3_prefetch_bucket_size=0, zero3_param_persistence_threshold=10 * _TIED["hidden_size"])


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict[tuple[str, int, bool], tuple[int, int, int, int, int]]:
    """(regime, reuse, offload) -> (turn, most after an evaluation, largest reduced gradient, frozen gradients
    reduced, gathered parameters seen as copies of their partitions)."""
    lines = engine_lines(tmp_path_factory.mktemp("offload"), _ENGINE, _TIED, _SETTINGS, "ZERO3OFFLOAD",
                         what="a ZeRO-3 engine with parameter and optimizer offload")
    return {(regime, int(reuse), offload == "1"): tuple(int(v) for v in rest)
            for regime, reuse, offload, *rest in lines}


@pytest.mark.slow
def test_evaluation_between_steps_keeps_only_the_turns_parameters_gathered(measured):
    for setting, (turn, after_eval, *_) in measured.items():
        assert after_eval == turn, setting
    # the settings differ: the reuse distance decides what the turn (and evaluation) keeps
    assert len({turn for turn, *_ in measured.values()}) >= 3


@pytest.mark.slow
def test_the_release_replay_equals_the_engine_under_offload_with_a_tied_head(measured):
    for reuse in (3_000_000, 10**9):
        ours = zero3_gathered_working_set(_workload("full"), _strategy(reuse))
        assert ours.turn == 4 * measured["full", reuse, True][0], reuse  # fp32: 4 bytes per gathered element


@pytest.mark.slow
def test_under_lora_the_replay_is_an_upper_bound_of_what_stays_gathered(measured):
    # Where the reuse window does not reach the first layer, equal. With a window over the whole model the
    # engine keeps less: layer 0's frozen q/k/v take the embedding's output, which needs no gradient, so their
    # backward never runs, they are missing from the recorded trace and are released after forward; the replay
    # assumes every module comes back in backward.
    near = zero3_gathered_working_set(_workload("lora"), _strategy(3_000_000))
    assert near.turn == 4 * measured["lora", 3_000_000, True][0]
    whole = zero3_gathered_working_set(_workload("lora"), _strategy(10**9))
    hidden = _TIED["hidden_size"]
    assert whole.turn - 4 * measured["lora", 10**9, True][0] == 4 * 3 * hidden * hidden


@pytest.mark.slow
def test_a_frozen_module_is_gathered_without_a_gradient(measured):
    full, lora = _workload("full"), _workload("lora")
    largest = full.model.largest_layer_parameters
    # full fine-tuning: DeepSpeed reduces the largest module's whole gradient (the tied embedding's)
    assert measured["full", 10**9, True][2] == largest
    # LoRA: no frozen parameter's gradient is ever reduced; the largest is an adapter's (r x hidden)
    assert measured["lora", 10**9, True][3] == measured["full", 10**9, True][3] == 0
    assert measured["lora", 10**9, True][2] == 8 * _TIED["hidden_size"] < largest
    # one rank with offloaded partitions: one GPU copy of the gathered module, and its gradient in full
    # fine-tuning (prefetch 0); several ranks: the all-gather's flat buffer and the copies out of it, either way
    offloaded = _strategy(10**9)
    assert zero3_gathered_buffer_bytes(full, offloaded) == 2 * 4 * largest
    assert zero3_gathered_buffer_bytes(lora, offloaded) == 4 * largest
    for workload in (full, lora):
        assert zero3_gathered_buffer_bytes(workload, replace(offloaded, gpus_per_node=4)) == 2 * 4 * largest


@pytest.mark.slow
def test_one_rank_gathers_its_partitions_in_place(measured):
    # Without parameter offload a one-rank engine's gathered parameter is its partition (the same storage:
    # `NoGatherHandle`), so the gathering and what the turn keeps add nothing beyond the weights; the full
    # gradient of the largest module still exists before the reduce.
    assert measured["full", 10**9, False][4] == 0
    assert measured["full", 10**9, False][0] == measured["full", 10**9, True][0] > 0  # gathered all the same
    full, lora = _workload("full"), _workload("lora")
    in_place = _strategy(10**9, offload="none")
    assert zero3_gathered_buffer_bytes(full, in_place) == 4 * full.model.largest_layer_parameters
    assert zero3_gathered_buffer_bytes(lora, in_place) == 0
    assert zero3_kept_bytes(full, in_place) == (0.0, 0.0, "")
    assert zero3_kept_bytes(full, _strategy(10**9))[0] > 0
