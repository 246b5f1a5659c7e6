"""The generated pair through the real `accelerate launch`: accelerate's DeepSpeedPlugin refuses a YAML that
repeats what the JSON owns, so a run that trains proves the split is right (1 process, DeepSpeed on CPU)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

TRAIN = """\
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
data = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
loader = torch.utils.data.DataLoader(data, batch_size=2)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
print("TRAINED", accelerator.distributed_type, accelerator.mixed_precision)
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("accelerate") is None, reason="accelerate's launcher is not installed")
def test_generated_deepspeed_pair_trains_under_accelerate_launch(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "answers.yaml").write_text(
        "micro_batch: 2\ngradient_accumulation: 2\ngradient_clipping: 0.5\n"
    )
    result = cli(
        "init",
        "--defaults",
        "--answers",
        "answers.yaml",
        "--system",
        "1xT4",
        "--gpus",
        "1",
        "--strategy",
        "zero2",
        "--precision",
        "no",
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "accelerate.ds.json").read_text())["gradient_clipping"] == 0.5
    (tmp_path / "train.py").write_text(TRAIN)
    done = subprocess.run(
        ["accelerate", "launch", "--config_file", "accelerate.yaml", "train.py"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "ACCELERATE_DISABLE_RICH": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "TRAINED DistributedType.DEEPSPEED no" in done.stdout
