"""AW707 follows the path Trainer users take: the Trainer hands its own torch optimizer (no "optimizer" block in the
JSON; transformers' deepspeed_optim_sched adds zero_allow_untested_optimizer) to accelerate's `prepare`, which under
ZeRO optimizer offload swaps it for a DeepSpeed CPU optimizer (map_pytorch_optim_to_deepspeed). A torch AdamW keeps
its update (DeepSpeedCPUAdam in AdamW mode, the run works: no finding); a torch SGD silently becomes Adam (AW707).
Checked with a real Accelerator and DeepSpeed engine (one CPU process, gloo) in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("deepspeed")

CONFIG = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
          "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}

PREPARE = textwrap.dedent("""
    import json, os, socket, sys
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
                      ACCELERATE_USE_DEEPSPEED="true")
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DeepSpeedPlugin
    config = json.loads(sys.argv[1])
    config["zero_allow_untested_optimizer"] = True  # what transformers' deepspeed_optim_sched adds
    accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config=config))
    model = torch.nn.Linear(8, 8)
    optimizer = getattr(torch.optim, sys.argv[2])(model.parameters(), lr=1e-3)
    model, optimizer = accelerator.prepare(model, optimizer)
    used = optimizer.optimizer.optimizer  # AcceleratedOptimizer -> ZeRO optimizer -> the one that steps
    print("PREPARED", type(used).__name__, getattr(used, "adam_w_mode", None))
""")


def _prepared(optimizer: str) -> str:
    run = subprocess.run([sys.executable, "-c", PREPARE, json.dumps(CONFIG), optimizer], capture_output=True,
                         text=True, timeout=300)
    lines = [line for line in run.stdout.splitlines() if line.startswith("PREPARED")]
    assert lines, run.stdout + run.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("torch_optimizer,optim,swapped", [
    ("AdamW", "adamw_torch", "PREPARED DeepSpeedCPUAdam True"),
    ("SGD", "sgd", "PREPARED DeepSpeedCPUAdam False"),
])
def test_prepare_swaps_the_trainers_optimizer_under_offload_and_aw707_says_when_it_changes(
        cli, write, torch_optimizer, optim, swapped):
    assert _prepared(torch_optimizer) == swapped
    write("ds.json", json.dumps(CONFIG))
    yaml = write("a.yaml", "distributed_type: DEEPSPEED\nnum_processes: 1\n"
                           "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    found = json.loads(cli("check", str(yaml), "--format", "json", "--select", "AW707", "--",
                           "--per_device_train_batch_size", "1", "--optim", optim).stdout)
    if swapped.endswith("True"):  # the AdamW update is kept: the run trains as asked
        assert found == []
    else:
        assert [(d["code"], d["severity"]) for d in found] == [("AW707", "warning")]
        assert "DeepSpeedCPUAdam in Adam mode" in found[0]["message"]
