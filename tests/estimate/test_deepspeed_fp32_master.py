"""DeepSpeed keeps a separate fp32 master partition of an fp32 model too (issue 28): real ZeRO-1/2/3 engines in
fp32 (no bf16/fp16 section) on this CPU, their optimizer's master partitions and Adam states counted by storage.

ZeRO-1/2 clone the partition (deepspeed 0.19.8 stage_1_and_2.py 560-561); ZeRO-3's alias for an fp32 partition
(stage3.py 1162-1167) compares a torch.device with the accelerator's device name, a str, which torch says is
unequal, so it copies too (1169-1172). The estimate counted no master under fp32 (4 B per sharded parameter
short: the GLM-4 and ChatGLM3 ZeRO-3 fp32 rows)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import spec_from_hf_config
from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for (stage,) in json.loads(sys.argv[2]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(**config))  # fp32: the config has no bf16/fp16 section
        ds = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": stage},
              "zero_force_ds_cpu_optimizer": False}
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds)
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        engine.backward(engine(input_ids=ids, labels=ids).loss)
        engine.step()  # Adam's states exist from the first step
        opt = engine.optimizer
        if stage == 3:
            masters, models = opt.fp32_partitioned_groups_flat, opt.fp16_partitioned_groups_flat
        else:
            masters, models = opt.single_partition_of_fp32_groups, opt.bit16_groups_flat
        shared = {t.untyped_storage().data_ptr() for t in models}
        separate = sum(m.untyped_storage().nbytes() for m in masters
                       if m.untyped_storage().data_ptr() not in shared)
        states = sum(v.untyped_storage().nbytes() for s in opt.optimizer.state.values() for v in s.values()
                     if torch.is_tensor(v) and v.numel() > 1)
        print("MASTER", stage, str(masters[0].dtype), separate, states, flush=True)
        engine.destroy()
    """
)
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}


@pytest.mark.slow
def test_fp32_zero_engines_keep_a_separate_fp32_master_partition(tmp_path: Path) -> None:
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, [[1], [2], [3]], "MASTER",
                         what="an fp32 ZeRO engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    workload = Workload(spec_from_hf_config(_TINY_LLAMA, name="tiny", source="test"), precision="fp32")
    elements = workload.trainable_parameters
    for stage, dtype, separate, states in lines:
        assert dtype == "torch.float32", (stage, dtype)
        # one process: nothing sharded; DeepSpeed pads a partition to its alignment (a few elements)
        counted = model_states(workload, Strategy(f"zero{stage}")).optimizer_states
        assert counted <= int(separate) + int(states) < counted + 64, (stage, int(separate) / elements,
                                                                      int(states) / elements, counted / elements)
        assert int(separate) // elements == 4, (stage, int(separate) / elements)  # the master: its own 4 bytes
