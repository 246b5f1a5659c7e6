"""AW707 is an error because the run fails: DeepSpeed refuses a torch optimizer under ZeRO optimizer offload, even
with the `zero_allow_untested_optimizer` transformers sets when it creates the Trainer's own optimizer (no
"optimizer" block). Checked against a real DeepSpeed engine (one CPU process, gloo) in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("deepspeed")

CONFIG = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}

ENGINE = textwrap.dedent("""
    import json, os, socket, sys
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    import torch, deepspeed
    config = json.loads(sys.argv[1])
    config["zero_allow_untested_optimizer"] = True  # what transformers' deepspeed_optim_sched adds
    model = torch.nn.Linear(8, 8)
    try:
        deepspeed.initialize(model=model, optimizer=torch.optim.AdamW(model.parameters()), config=config)
        print("RAN")
    except Exception as exc:
        print("RAISED", type(exc).__name__)
""")


def test_deepspeed_refuses_the_trainers_own_optimizer_under_offload_and_aw707_says_so(cli, write):
    run = subprocess.run([sys.executable, "-c", ENGINE, json.dumps(CONFIG)], capture_output=True, text=True,
                         timeout=300)
    assert "RAISED ZeRORuntimeException" in run.stdout, run.stdout + run.stderr[-2000:]
    write("ds.json", json.dumps(CONFIG))
    yaml = write("a.yaml", "distributed_type: DEEPSPEED\nnum_processes: 1\n"
                           "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    found = json.loads(cli("check", str(yaml), "--format", "json", "--select", "AW707", "--",
                           "--per_device_train_batch_size", "1").stdout)
    assert [(d["code"], d["severity"]) for d in found] == [("AW707", "error")]
    assert "ZeRORuntimeException" in found[0]["message"]
