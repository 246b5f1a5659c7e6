"""ZeRO's buckets as the run gets them (issue 28, full fine-tuning over-estimated under ZeRO-2/3):

* "auto" in the JSON is filled from the model's hidden size by the HF Trainer (and accelerate): reduce_bucket_size
  h², stage3_prefetch_bucket_size 0.9·h², stage3_param_persistence_threshold 10·h. They were counted at
  DeepSpeed's defaults (5e8, 5e7, 1e5): about 1 GiB of reduce bucket too much on a 7B model.
* DeepSpeed allocates the whole reduce bucket whatever the trainable count (LoRA too).
* ZeRO-3's step starts by releasing every gathered parameter: the largest module and its gradient, which the
  backward holds, are not in the optimizer step's peak.

Checked against transformers' own HfTrainerDeepSpeedConfig and a real ZeRO-3 engine on this CPU."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.configured_strategy import strategy_from_effective
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import (
    persistence_threshold,
    reduce_bucket_elements,
    zero3_gathered_buffer_bytes,
    zero3_prefetch_elements,
)
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from tests.estimate.deepspeed_engine import engine_lines

_AUTO = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {
    "stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto"}}


def _strategy(config: dict) -> Strategy:
    strategy = strategy_from_effective(resolve(None, parse_text(json.dumps(config), Path("ds.json"),
                                                                kind="deepspeed")))
    assert strategy is not None
    return strategy


def test_auto_buckets_are_what_the_trainer_fills_in() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    workload = Workload(resolve_model("qwen2.5-7b"), precision="bf16")
    filled = HfTrainerDeepSpeedConfig(json.loads(json.dumps(_AUTO)))
    args = transformers.TrainingArguments(output_dir="/tmp/unused", report_to=[])
    filled.trainer_config_finalize(args, SimpleNamespace(config=SimpleNamespace(
        hidden_size=workload.model.hidden_size)), num_training_steps=10)
    zero = filled.config["zero_optimization"]
    strategy = _strategy(_AUTO)
    assert reduce_bucket_elements(workload, strategy) == zero["reduce_bucket_size"] == 3584 * 3584
    assert zero3_prefetch_elements(workload, strategy) == zero["stage3_prefetch_bucket_size"]
    assert persistence_threshold(workload, strategy) == zero["stage3_param_persistence_threshold"]
    # written values are kept; nothing written: DeepSpeed's defaults
    assert reduce_bucket_elements(workload, _strategy({"zero_optimization": {"stage": 2, "reduce_bucket_size": 2e8}
                                                       })) == 2e8
    assert reduce_bucket_elements(workload, Strategy("zero3")) == 5e8
    # the qwen2.5-7b ZeRO-3 estimate: the reduce bucket 2 x (5e8 - 3584²) bytes smaller with "auto"
    default = estimate_memory(workload, Strategy("zero3", gpus_per_node=2))
    auto = estimate_memory(workload, Strategy("zero3", gpus_per_node=2, zero_reduce_bucket_size="auto",
                                              zero3_prefetch_bucket_size="auto",
                                              zero3_param_persistence_threshold="auto"))
    assert default.buffers - auto.buffers >= 2 * (5e8 - 3584 * 3584)


_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for bucket, frozen in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True}, "zero_force_ds_cpu_optimizer": False,
              "zero_optimization": {"stage": 3, "reduce_bucket_size": bucket}}
        model = LlamaForCausalLM(LlamaConfig(**config)).to(torch.bfloat16)
        for name, p in model.named_parameters():  # a LoRA-like run: few trainable elements
            p.requires_grad_(not frozen or "q_proj" in name)
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds)
        gathered = lambda: sum(p.ds_numel for p in engine.module.parameters()
                               if p.ds_status == ZeroParamStatus.AVAILABLE and not p.ds_persist)
        at_step = []
        engine.optimizer.optimizer.register_step_pre_hook(lambda *_: at_step.append(gathered()))
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        engine.backward(engine(input_ids=ids, labels=ids).loss)
        engine.step()
        buffers = [b.buffer.numel() for b in engine.optimizer.ipg_buckets.values()]
        trainable = sum(p.ds_numel for p in engine.module.parameters() if p.requires_grad)
        print("BUCKET", bucket, int(frozen), trainable, max(buffers), max(at_step), flush=True)
        engine.destroy()
    """
)
_TINY = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}


@pytest.mark.slow
def test_a_real_zero3_engine_allocates_the_whole_bucket_and_releases_everything_for_the_step(tmp_path) -> None:
    lines = engine_lines(tmp_path, _ENGINE, _TINY, [[3_000_000, False], [3_000_000, True]], "BUCKET",
                         what="a bf16 ZeRO-3 engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    spec = spec_from_hf_config(_TINY, name="tiny", source="test")
    for bucket, frozen, trainable, allocated, gathered_at_step in ([int(v) for v in line] for line in lines):
        assert allocated == bucket == reduce_bucket_elements(Workload(spec), Strategy(
            "zero3", zero_reduce_bucket_size=bucket))
        if frozen:
            assert trainable < bucket  # the bucket is not cut to the trainable count
        assert gathered_at_step == 0  # nothing gathered in the step: memory.py leaves it out of that phase
    # the optimizer phase holds the states, the step's temporaries and the buffers but for the gathering
    workload, strategy = Workload(spec, precision="bf16"), Strategy("zero3")
    estimate = estimate_memory(workload, strategy)
    released = zero3_gathered_buffer_bytes(workload, strategy)
    step, _ = optimizer_step_temporaries(workload, strategy)
    assert released > 0
    assert abs(dict(estimate.phases)["optimizer"] - (estimate.weights + estimate.gradients + estimate.optimizer_states
                                                     + step + estimate.buffers - released)) <= 2
