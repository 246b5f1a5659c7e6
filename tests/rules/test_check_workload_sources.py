"""`check`'s workload flags with and without a plan, the plan's Trainer arguments, and one finding per problem:
regressions from the round-2 QA run, through the real CLI and engine."""

from __future__ import annotations

import json
from pathlib import Path

from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanSystem, PlanTraining, dump_plan, plan_path_for

DS_YAML = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\n"
           "machine_rank: 0\nuse_cpu: false\ndeepspeed_config:\n  deepspeed_config_file: ds_config.json\n")
DS_JSON = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
           "bf16": {"enabled": True}, "zero_optimization": {"stage": 1}}


def planned(tmp_path: Path, monkeypatch, *, plan: PlanFile | None = None) -> Path:
    """init's ZeRO-1 output for llama-3.1-8b on 8xH100, with gradient checkpointing on in its plan."""
    monkeypatch.chdir(tmp_path)
    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text(DS_YAML)
    (tmp_path / "ds_config.json").write_text(json.dumps(DS_JSON))
    if plan is None:
        plan = PlanFile(files=PlanFiles(accelerate="accelerate.yaml", deepspeed="ds_config.json"),
                        system=PlanSystem(name="8xH100-80GB", gpus_per_machine=8), model=PlanModel(name="llama-3.1-8b"),
                        training=PlanTraining(micro_batch=1, sequence_length=2048, gradient_checkpointing=True))
    plan_path_for(yaml).write_text(dump_plan(plan))
    return yaml


def codes(result) -> dict[str, dict]:
    return {d["code"]: d for d in json.loads(result.stdout)}


def test_workload_flags_without_model_override_the_plans_fields(cli, tmp_path, monkeypatch):
    """--seq-len/--micro-batch without --model were silently ignored under a plan: now they replace its fields."""
    yaml = planned(tmp_path, monkeypatch)
    assert "AW501" not in codes(cli("check", str(yaml), "--format", "json"))
    result = cli("check", str(yaml), "--seq-len", "65536", "--micro-batch", "64", "--format", "json")
    assert result.exit_code == 1
    assert "micro-batch 64 × 65536" in codes(result)["AW501"]["message"]
    assert "--seq-len 65536 replaces training.sequence_length" in result.stderr


def test_model_with_a_plan_keeps_the_plans_other_fields(cli, tmp_path, monkeypatch):
    """--model --seq-len 8192 was estimated without the plan's checkpointing (112.6 GiB, AW501) while --explain
    showed checkpointing on: now the plan is the base, --seq-len replaces one field, and both agree."""
    yaml = planned(tmp_path, monkeypatch)
    result = cli("check", str(yaml), "--model", "llama-3.1-8b", "--seq-len", "8192", "--explain", "--format", "json")
    findings = json.loads(result.stdout[result.stdout.index("\n["):])
    assert "AW501" not in {d["code"] for d in findings}
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  ")}
    assert "8192" in rows["sequence_length"] and "command line" in rows["sequence_length"]
    assert "true" in rows["gradient_checkpointing"] and "plan" in rows["gradient_checkpointing"]
    # without checkpointing (the flag replaces the plan's) the same run does not fit
    result = cli("check", str(yaml), "--model", "llama-3.1-8b", "--seq-len", "8192", "--no-gradient-checkpointing",
                 "--format", "json")
    assert result.exit_code == 1 and "AW501" in codes(result)


def test_workload_flags_without_model_or_plan_are_a_usage_error(cli, tmp_path, monkeypatch):
    yaml = planned(tmp_path, monkeypatch)
    plan_path_for(yaml).unlink()
    result = cli("check", str(yaml), "--seq-len", "4096")
    assert result.exit_code == 2
    assert "--seq-len need --model" in result.stderr
