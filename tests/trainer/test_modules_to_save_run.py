"""`accelwiz run` trains the modules_to_save that `accelwiz estimate --config` counts: a plan with
`lora_modules_to_save: [lm_head]` beside one CPU process's YAML (one launch, about 20 s on 2 cores)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from tests.trainer.test_trainer_cpu_runs import accelwiz_run, write_config

pytestmark = pytest.mark.slow

PLAN = """schema_version: 1
files:
  accelerate: single.yaml
system:
  name: local
model:
  name: {checkpoint}
  source: checkpoint
fine_tuning:
  method: lora
  lora_rank: 4
  lora_alpha: 32
  lora_targets: [q_proj, v_proj]
  lora_modules_to_save: [lm_head]
training:
  micro_batch: 2
  gradient_accumulation: 1
  sequence_length: 32
  precision: fp32
"""


def test_the_run_trains_the_copies_the_estimate_counted(tmp_path, checkpoint):
    config, out = write_config(tmp_path, "single"), tmp_path / "out"
    config.with_name(config.stem + ".plan.yaml").write_text(PLAN.format(checkpoint=checkpoint))
    estimated = CliRunner().invoke(app, ["estimate", "--config", str(config), "--format", "json"])
    assert estimated.exit_code in (0, 1), estimated.output
    workload = json.loads(estimated.stdout)["workload"]
    assert workload["modules_to_save"] == ["lm_head"] and workload["saved_parameters"] > 0

    run = accelwiz_run("--config", str(config), "--steps", "3", "--output-dir", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "run_report.json").read_text())
    assert report["trainable_parameters"] == workload["trainable_parameters"]
    saved = report["settings"]["lora_modules_to_save"]
    assert (saved["value"], saved["source"]) == (["lm_head"], "plan")
    adapter = json.loads((out / "adapter" / "adapter_config.json").read_text())
    assert adapter["modules_to_save"] == ["lm_head"]
