"""Trainer mode with the optimizer offloaded: the JSON names DeepSpeed's optimizer, so the HF Trainer hands
DeepSpeed a DummyOptim and DeepSpeedCPUAdam runs the step (not a torch AdamW on CPU tensors)."""

from __future__ import annotations

import json

import pytest
import yaml


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _trainer_flags(plan_path):
    return yaml.safe_load(plan_path.read_text())["training"]["trainer_arguments"]


def test_offloaded_optimizer_in_trainer_mode_is_deepspeeds_and_checks_clean(cli, in_tmp):
    result = cli("init", "--system", "2x8xA100-80GB", "--model", "llama-3.1-70b", "--for", "trainer", "--defaults",
                 "-o", "zero3.yaml")
    assert result.exit_code == 0, result.stderr
    config = json.loads((in_tmp / "zero3.ds.json").read_text())
    assert config["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert config["optimizer"] == {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                               "weight_decay": "auto"}}
    assert "scheduler" not in config  # the Trainer's own scheduler wraps the DeepSpeed optimizer
    assert "AW" not in result.stderr  # init checked the files with the flags it prints
    checked = cli("check", "zero3.yaml", "--", *_trainer_flags(in_tmp / "zero3.plan.yaml"))
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert "AW" not in checked.stdout + checked.stderr


def test_trainer_mode_without_offload_keeps_the_trainers_optimizer(cli, in_tmp):
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--for", "trainer", "--strategy",
                 "zero2", "--defaults", "-o", "z2.yaml")
    assert result.exit_code == 0, result.stderr
    config = json.loads((in_tmp / "z2.ds.json").read_text())
    assert "offload_optimizer" not in config["zero_optimization"]
    assert "optimizer" not in config


def test_the_transformers_contract_the_block_relies_on():
    """deepspeed_optim_sched: an `optimizer` block -> DummyOptim (DeepSpeed builds it); none -> the Trainer's."""
    deepspeed = pytest.importorskip("transformers.integrations.deepspeed")
    import inspect

    source = inspect.getsource(deepspeed.deepspeed_optim_sched)
    assert '"optimizer" in config' in source and "DummyOptim" in source
    filled = inspect.getsource(deepspeed.HfTrainerDeepSpeedConfig.trainer_config_process)
    for key in ("optimizer.params.lr", "optimizer.params.betas", "optimizer.params.eps",
                "optimizer.params.weight_decay"):
        assert key in filled
