"""What `accelwiz run` says before it launches: the effective precision, and suggestions only counted."""

from __future__ import annotations

YAML = """distributed_type: DEEPSPEED
num_processes: 1
num_machines: 1
deepspeed_config:
  deepspeed_config_file: ds.json
  zero3_init_flag: false
"""
JSON = """{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
 "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}"""


def test_dry_run_headline_uses_the_deepspeed_json_precision(cli, write, monkeypatch):
    config = write("accelerate.yaml", YAML)
    write("ds.json", JSON)
    monkeypatch.chdir(config.parent)
    result = cli("run", "--model", "tiny", "--config", "accelerate.yaml", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "DEEPSPEED, ZeRO-2, 1 process on 1 machine, mixed_precision bf16" in result.stderr
    # the JSON fixes GA and precision: `check` explains that (AW215, AW403); a launch only counts it
    assert "AW215" not in result.stderr and "AW403" not in result.stderr
    assert "2 suggestions: see `accelwiz check accelerate.yaml`" in result.stderr
    assert "accelerate launch --config_file accelerate.yaml" in result.stdout  # the line a user can copy
