"""`estimate --config accelerate.yaml`: the estimate of the run the files and the plan describe, resolved as `run`
resolves it, and the same number `init` recorded and `estimate` gives for the same run spelled in flags."""

from __future__ import annotations

import json

import pytest


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture()
def planned(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--model", "llama-3.2-1b", "--system", "4xA100-80GB", "--defaults")
    assert result.exit_code == 0, result.stderr
    return tmp_path


def test_the_plan_s_run_is_estimated_as_init_recorded_it_and_as_its_flags_spell_it(cli, planned):
    import yaml

    plan = yaml.safe_load((planned / "accelerate.plan.yaml").read_text())
    training = plan["training"]
    from_config = _estimate(cli, "--config", str(planned / "accelerate.yaml"))
    spelled = _estimate(cli, "--model", "llama-3.2-1b", "--system", "4xA100-80GB", "--strategy", "ddp",
                        "--micro-batch", str(training["micro_batch"]), "--seq-len", str(training["sequence_length"]),
                        *(["--gradient-checkpointing"] if training["gradient_checkpointing"] else []))
    assert from_config["workload"] == spelled["workload"]
    assert from_config["estimate"]["strategy"] == spelled["estimate"]["strategy"]
    total = from_config["estimate"]["per_gpu_bytes"]["total"]
    assert total == spelled["estimate"]["per_gpu_bytes"]["total"] == plan["estimate"]["per_gpu_bytes"]


def test_flags_replace_single_values_of_the_plan(cli, planned):
    base = _estimate(cli, "--config", str(planned / "accelerate.yaml"))
    larger = _estimate(cli, "--config", str(planned / "accelerate.yaml"), "--micro-batch", "4", "--seq-len", "1024")
    assert (larger["workload"]["micro_batch"], larger["workload"]["seq_len"]) == (4, 1024)
    assert larger["workload"]["gradient_checkpointing"] == base["workload"]["gradient_checkpointing"]


def test_a_dpo_plan_is_estimated_with_its_post_training_phases(cli, planned):
    path = planned / "accelerate.plan.yaml"
    path.write_text(path.read_text().replace("  kind: sft\n", "  kind: dpo\n  max_prompt_length: 256\n"))
    report = _estimate(cli, "--config", str(planned / "accelerate.yaml"))
    assert report["posttraining"]["kind"] == "dpo"
    assert report["posttraining"]["max_prompt_length"] == 256  # the plan's; the completion at TRL's default
    assert report["posttraining"]["max_completion_length"] == 512


def test_a_plan_sized_by_a_parameter_count_is_estimated_and_one_without_a_model_refused(cli, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "--system", "1xA100-80GB", "--model", "3B", "--defaults").exit_code == 0
    report = _estimate(cli, "--config", "accelerate.yaml")
    assert report["model"]["parameters"] == 3_000_000_000
    assert cli("init", "--system", "1xA100-80GB", "--defaults", "--force").exit_code == 0
    refused = cli("estimate", "--config", "accelerate.yaml")
    assert refused.exit_code == 2 and "names no model to train" in refused.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--config", "missing.yaml"), "--config missing.yaml: no such file"),
    (("--config", "accelerate.yaml", "--params", "7e9"), "--params sizes a model without files"),
])
def test_bad_config_input_is_one_line(cli, planned, args, message):
    result = cli("estimate", *args)
    assert result.exit_code == 2 and message in result.stderr
