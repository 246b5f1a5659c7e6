"""DeepSpeed's bf16 master weights and optimizer states (`bf16.bf16_master_weights_and_grads`,
`bf16.bf16_optimizer_states`, 0.18.3+), said by the estimate's flags: real ZeRO-1/2/3 engines of a bf16 model on
this CPU, their optimizer's master partitions and Adam states counted by storage and dtype, against the bytes the
CLI counts for the same run through `--bf16-master-weights-and-grads --bf16-optimizer-states`, and without them
(fp32 masters and states: a bf16 model under DeepSpeed is mixed precision to it). One process: nothing sharded."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for stage, low in json.loads(sys.argv[2]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(**config))  # the engine casts it to bf16
        bf16 = {"enabled": True, "bf16_master_weights_and_grads": low, "bf16_optimizer_states": low}
        ds = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": stage}, "bf16": bf16,
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
        kept = [v for s in opt.optimizer.state.values() for v in s.values() if torch.is_tensor(v) and v.numel() > 1]
        states = sum(v.untyped_storage().nbytes() for v in kept)
        print("BF16MASTER", stage, int(low), str(masters[0].dtype), str(kept[0].dtype), separate, states, flush=True)
        engine.destroy()
    """
)
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}
_FLAGS = ("--bf16-master-weights-and-grads", "--bf16-optimizer-states")


def _counted(cli, config: Path, stage: int, low: bool) -> tuple[int, int]:
    """The optimizer's bytes the CLI counts for the engine's run (master copy and Adam states), and the model's
    parameter count."""
    result = cli("estimate", "--model", str(config), "--strategy", f"zero{stage}", "--gpus", "1", "--gpu-memory",
                 "80GiB", "--precision", "bf16", "--seq-len", "8", *(_FLAGS if low else ()), "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["estimate"]["strategy"]["bf16_master"]["master_weights_and_grads"] is low
    return data["estimate"]["sizes"]["optimizer_states"], data["model"]["parameters"]


@pytest.mark.slow
def test_the_flags_count_the_bf16_master_and_states_a_real_engine_keeps(cli, tmp_path: Path) -> None:
    settings = [[1, True], [2, True], [3, True], [3, False]]
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, settings, "BF16MASTER",
                         what="a bf16 ZeRO engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**_TINY_LLAMA, "architectures": ["LlamaForCausalLM"]}))
    for (stage, low), (_, _, master_dtype, state_dtype, separate, states) in zip(settings, lines):
        counted, parameters = _counted(cli, config, stage, low)
        width = 2 if low else 4
        dtype = "torch.bfloat16" if low else "torch.float32"
        assert (master_dtype, state_dtype) == (dtype, dtype), (stage, low, master_dtype, state_dtype)
        # a master copy of its own (never the bf16 model's storage) and Adam's m and v in its dtype
        assert int(separate) // parameters == width and int(states) // parameters == 2 * width, (stage, low)
        # DeepSpeed pads a partition to its alignment (a few elements)
        assert counted <= int(separate) + int(states) < counted + 64, (stage, low, counted / parameters)
