"""Run a one-process DeepSpeed engine script on the CPU and read the lines it prints: the ground truth that the
host-RAM, bf16-state and ZeRO-3 gathering tests compare the estimator with.

Each script builds a tiny model from a config (argv[1]) for each setting (argv[2]) and prints one line per
setting starting with a tag. The engine runs in its own process so DeepSpeed's process group and op builds do
not leak into the test session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port


def engine_lines(tmp_path: Path, source: str, model: dict[str, Any], settings: list, tag: str, *,
                 what: str, env: dict[str, str] | None = None) -> list[list[str]]:
    """The fields after `tag` of each line the script printed, one per setting; a skip naming `what` and the
    script's last error line where DeepSpeed could not run here."""
    pytest.importorskip("deepspeed")
    script = tmp_path / "engine.py"
    script.write_text(source)
    config = {k: v for k, v in model.items() if k != "model_type"}
    environment = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                   "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", **(env or {})}
    run = subprocess.run([sys.executable, str(script), json.dumps(config), json.dumps(settings)],
                         capture_output=True, text=True, env=environment, timeout=900, check=False)
    lines = [line.split()[1:] for line in run.stdout.splitlines() if line.startswith(f"{tag} ")]
    if len(lines) != len(settings):
        pytest.skip(f"{what} did not run here: {(run.stderr.strip().splitlines() or ['?'])[-1]}")
    return lines


# A tiny Llama most engine tests build (256 wide, 2 layers: a few seconds per engine on the CPU)
TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}

# One ZeRO engine per setting [stage, bf16 section or null (fp32: no section)], one step of torch AdamW: prints
# MASTER stage master-dtype state-dtype separate-master-bytes adam-state-bytes. The separate bytes leave out a
# master that shares the model's storage (an alias); the states are Adam's m and v (the step count aside).
MASTER_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for stage, bf16 in json.loads(sys.argv[2]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(**config))  # fp32; the engine casts it under a bf16 section
        ds = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": stage},
              "zero_force_ds_cpu_optimizer": False, **({"bf16": bf16} if bf16 else {})}
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
        print("MASTER", stage, str(masters[0].dtype), str(kept[0].dtype), separate, states, flush=True)
        engine.destroy()
    """
)

# One engine per setting [stage, bf16 section or null (fp32)] with the optimizer offloaded: DeepSpeedCPUAdam built
# from the JSON's optimizer block. Prints HOST stage host-bytes master-gradient-dtype state-dtype: every host tensor
# the offloading optimizer holds (master partition, its gradient, the gradient buffer, Adam's m and v).
HOST_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for stage, bf16 in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
              "zero_optimization": {"stage": stage, "offload_optimizer": {"device": "cpu"}},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, **({"bf16": bf16} if bf16 else {})}
        engine, *_ = deepspeed.initialize(model=LlamaForCausalLM(LlamaConfig(**config)), config=ds)
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        engine.backward(engine(input_ids=ids, labels=ids).loss)
        engine.step()
        o = engine.optimizer
        size = lambda ts: sum(t.numel() * t.element_size() for t in ts if t is not None)
        masters = o.fp32_partitioned_groups_flat if stage == 3 else o.single_partition_of_fp32_groups
        kept = [v for g in masters for v in o.optimizer.state[g].values() if torch.is_tensor(v) and v.numel() > 1]
        host = size(masters) + size([t.grad for t in masters]) + size(kept)
        host += size([o.grad_partitions_flat_buffer]) if stage == 3 else size([o.temp_grad_buffer_for_cpu_offload])
        print("HOST", stage, host, str(masters[0].grad.dtype), str(kept[0].dtype), flush=True)
        engine.destroy()
    """
)
