"""A newcomer's first hour without dead ends (issue 31), through the real command line: init offers what its own
review recommends, the quickstart pasted twice runs, and the small frictions of `run`, `init` and the help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def accelwiz(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The installed console script, as a user runs it (its `Written by:` line and hints quote this argv)."""
    script = Path(sys.executable).with_name("accelwiz")
    return subprocess.run([str(script), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "80"}, check=False)


# --- 1. init offers every strategy its review can recommend --------------------------------------------------


def test_init_preselects_fsdp_grad_op_where_its_review_would_recommend_it(cli, in_tmp):
    """llama-8b, micro-batch 2 on 8xL40S: ZeRO-2 does not fit, FSDP2 shard-grad-op does. init pre-selected
    ZeRO-3 and its own review warned AW503 'FSDP2 shard-grad-op fits', a choice its menu did not have."""
    (in_tmp / "answers.yaml").write_text("system: 8xL40S\nmodel: llama-8b\nmicro_batch: 2\n")
    result = cli("init", "--answers", "answers.yaml", "--defaults")
    assert result.exit_code == 0, result.stderr
    assert "AW503" not in result.stderr
    assert "How should training be distributed? fsdp-grad-op" in result.stderr
    config = yaml.safe_load((in_tmp / "accelerate.yaml").read_text())
    assert config["distributed_type"] == "FSDP"
    assert config["fsdp_config"]["fsdp_version"] == 2
    assert config["fsdp_config"]["fsdp_reshard_after_forward"] is False  # accelerate's SHARD_GRAD_OP
    plan = yaml.safe_load((in_tmp / "accelerate.plan.yaml").read_text())
    assert plan["estimate"]["strategy"] == "FSDP2 shard-grad-op"
    checked = cli("check", "accelerate.yaml", "--format", "json")
    assert "AW503" not in checked.stdout and checked.exit_code == 0, checked.stdout


def test_what_aw503_recommends_is_what_init_costs_and_writes():
    """AW503 (rules/sharding_advice.py) picks among estimate's candidate strategies; init's menu costs exactly
    those on several GPUs, so the review never names a strategy the menu lacks."""
    from accelwiz.estimate.strategy import candidate_strategies
    from accelwiz.wizard.costing import KIND_TO_CHOICE, offered_strategies

    for gpus, nodes in ((2, 1), (8, 1), (8, 2)):
        assert offered_strategies(gpus, nodes) == candidate_strategies(gpus, nodes)
        assert {s.kind for s in candidate_strategies(gpus, nodes)} <= set(KIND_TO_CHOICE)


def test_fsdp_grad_op_is_refused_on_one_gpu_and_with_parameter_offload(cli, in_tmp):
    one = cli("init", "--defaults", "--system", "1xA100-80GB", "--model", "gpt2", "--strategy", "fsdp-grad-op")
    assert one.exit_code == 2
    assert "'fsdp-grad-op' is not one of the choices here: single, zero2, zero3" in one.stderr
    (in_tmp / "answers.yaml").write_text("system: 8xH100-80GB\nmodel: gpt2\nstrategy: fsdp-grad-op\n"
                                         "offload_params: true\n")
    offload = cli("init", "--answers", "answers.yaml", "--defaults")
    assert offload.exit_code == 2
    assert "answer `offload_params: True` cannot apply" in offload.stderr


# --- 2. the quickstart pasted twice ------------------------------------------------------------------------


def test_the_quickstart_pasted_twice_reuses_identical_files_and_runs(tmp_path):
    first = accelwiz("init", "--model", "tiny", "--defaults", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    second = accelwiz("init", "--model", "tiny", "--defaults", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "unchanged: accelerate.yaml, accelerate.plan.yaml" in second.stderr
    assert "start training with:" in second.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == written  # no .bak, nothing rewritten
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == stamps
    # `&& accelwiz run` goes on: the run the second paste reaches (a dry run here: no training in this test)
    assert accelwiz("run", "--dry-run", cwd=tmp_path).returncode == 0


def test_a_differing_second_init_names_the_commands_that_continue(tmp_path):
    assert accelwiz("init", "--model", "tiny", "--defaults", cwd=tmp_path).returncode == 0
    before = (tmp_path / "accelerate.yaml").read_bytes()
    other = accelwiz("init", "--model", "small", "--defaults", cwd=tmp_path)
    assert other.returncode == 2
    message = " ".join(other.stderr.split())
    assert "accelerate.yaml and accelerate.plan.yaml already exist and differ from what this init writes" in message
    assert "`accelwiz init --model small --defaults --force`" in message
    assert "`accelwiz run`" in message
    assert (tmp_path / "accelerate.yaml").read_bytes() == before
    forced = accelwiz("init", "--model", "small", "--defaults", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "accelerate.yaml.bak").read_bytes() == before


def test_identical_files_are_kept_and_only_the_missing_one_is_written(cli, in_tmp):
    """The plan deleted, the YAML left as init wrote it: the YAML is reused and the plan written, no --force."""
    assert cli("init", "--defaults", "--model", "tiny", "-o", "cpu.yaml").exit_code == 0
    yaml_bytes = (in_tmp / "cpu.yaml").read_bytes()
    (in_tmp / "cpu.plan.yaml").unlink()
    again = cli("init", "--defaults", "--model", "tiny", "-o", "cpu.yaml")
    assert again.exit_code == 0, again.stderr
    assert "unchanged: cpu.yaml" in again.stderr and "wrote cpu.plan.yaml" in again.stderr
    assert (in_tmp / "cpu.yaml").read_bytes() == yaml_bytes and (in_tmp / "cpu.plan.yaml").exists()
    assert not (in_tmp / "cpu.yaml.bak").exists()
    edited = yaml_bytes.replace(b"num_processes: 1", b"num_processes: 2")
    assert edited != yaml_bytes
    (in_tmp / "cpu.yaml").write_bytes(edited)
    refused = cli("init", "--defaults", "--model", "tiny", "-o", "cpu.yaml")
    assert refused.exit_code == 2
    assert "cpu.yaml already exists and differs" in " ".join(refused.stderr.split())
    assert "`accelwiz run --config cpu.yaml`" in " ".join(refused.stderr.split())
