"""AW237 (issue 29, Video-LLaVA@f0244ed): ZeRO-Offload with no `optimizer` block. DeepSpeed's own
`deepspeed.initialize` refuses the script's torch optimizer; accelerate (and the HF Trainer, which prepares its
optimizer through accelerate) swaps it for DeepSpeedCPUAdam and runs. The rule fires only where DeepSpeed's own
reader may read the JSON, and the differential test runs the three consumers on this CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.estimate.deepspeed_engine import free_port

VIDEO_LLAVA = Path(__file__).parents[1] / "corpus" / "threads" / "PKU-YuanGroup-Video-LLaVA__f0244ed.json"
OFFLOAD = {"train_micro_batch_size_per_gpu": 1,
           "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}


def codes(cli, *argv: str) -> list[str]:
    result = cli("check", "--format", "json", *argv)
    return [d["code"] for d in json.loads(result.stdout)] if result.stdout.strip() else []


@pytest.mark.parametrize("extra,fires", [
    ({}, True), ({"zero_force_ds_cpu_optimizer": False}, False), ({"zero_force_ds_cpu_optimizer": "false"}, True),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}, False),
    ({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"}}}, False)])
def test_a_json_deepspeed_alone_reads(cli, tmp_path, extra, fires):
    # "false" is a true string to DeepSpeed, which tests the value as written for truth
    (tmp_path / "ds.json").write_text(json.dumps({**OFFLOAD, **extra}))
    assert ("AW237" in codes(cli, str(tmp_path / "ds.json"))) is fires


def test_silent_where_accelerate_or_the_trainer_swaps_the_optimizer(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text(json.dumps(OFFLOAD))
    (tmp_path / "a.yaml").write_text("distributed_type: DEEPSPEED\nnum_processes: 2\n"
                                     "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    assert "AW237" not in codes(cli, "a.yaml")
    assert "AW237" not in codes(cli, "ds.json", "--", "--deepspeed", "ds.json")
    # the frozen case as the thread ran it: the Trainer with Video-LLaVA's zero2_offload.json
    assert "AW237" not in codes(cli, str(VIDEO_LLAVA), "--num-processes", "8", "--", "--deepspeed",
                                str(VIDEO_LLAVA), "--bf16", "true", "--lr_scheduler_type", "cosine")


_CONSUMERS = r'''
import json, sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
ds = json.load(open(sys.argv[1]))
ds = {k: v for k, v in ds.items() if k not in ("fp16", "bf16")}  # fp32 on this CPU
torch.manual_seed(0)
model = lambda: LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2))
def basic(engine_optimizer):
    return type(engine_optimizer.optimizer).__name__
try:  # a script's own deepspeed.initialize with a torch optimizer
    import deepspeed
    own = {**ds, "train_micro_batch_size_per_gpu": 1, "train_batch_size": 1, "gradient_accumulation_steps": 1,
           "zero_optimization": {**ds["zero_optimization"], "reduce_bucket_size": 1000000}}
    m = model()
    engine, optimizer, *_ = deepspeed.initialize(model=m, optimizer=torch.optim.AdamW(m.parameters()), config=own)
    print("CONSUMER deepspeed ran", basic(optimizer), flush=True)
except Exception as error:
    print("CONSUMER deepspeed raised", type(error).__name__, flush=True)
from datasets import Dataset
from transformers import Trainer, TrainingArguments
rows = Dataset.from_dict({"input_ids": [[1, 2, 3, 4]] * 2, "labels": [[1, 2, 3, 4]] * 2})
args = TrainingArguments(sys.argv[2], deepspeed=ds, per_device_train_batch_size=1, max_steps=1, report_to=[],
                         save_strategy="no", lr_scheduler_type="cosine")
trainer = Trainer(model=model(), args=args, train_dataset=rows)
trainer.train()
print("CONSUMER trainer ran", basic(trainer.optimizer.optimizer), flush=True)
'''


@pytest.mark.slow
def test_the_consumers_on_cpu(tmp_path):
    pytest.importorskip("deepspeed")
    script = tmp_path / "consumers.py"
    script.write_text(_CONSUMERS)
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "RANK": "0",
           "WORLD_SIZE": "1", "LOCAL_RANK": "0"}
    run = subprocess.run([sys.executable, str(script), str(VIDEO_LLAVA), str(tmp_path / "out")], env=env,
                         capture_output=True, text=True, timeout=900, check=False)
    lines = [line.split()[1:] for line in run.stdout.splitlines() if line.startswith("CONSUMER ")]
    if len(lines) != 2:
        pytest.skip(f"the consumers did not run here: {(run.stderr.strip().splitlines() or ['?'])[-1]}")
    assert lines[0] == ["deepspeed", "raised", "ZeRORuntimeException"]
    assert lines[1] == ["trainer", "ran", "DeepSpeedCPUAdam"]  # accelerate's map_pytorch_optim_to_deepspeed
