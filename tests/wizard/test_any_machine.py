"""`--system NxGPU / MxNxGPU` for every GPU of the probe's table, answer spellings, file names and the help."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from accelwiz.errors import UsageError
from accelwiz.probe.gpus import GPU_MODELS
from accelwiz.probe.profiles import load_system


@pytest.mark.parametrize(
    ("spec", "machines", "gpus", "gpu_key"),
    [("1xA100-80GB", 1, 1, "A100-80GB"), ("4xL40S", 1, 4, "L40S"), ("2x8xA100-80GB", 2, 8, "A100-80GB"),
     ("16xH100-80GB", 2, 8, "H100-80GB"), ("8xh100", 1, 8, "H100-80GB"), ("2x8xH100", 2, 8, "H100-80GB")],
)
def test_composed_machines(spec, machines, gpus, gpu_key):
    profile = load_system(spec)
    model = next(m for m in GPU_MODELS if m.key == gpu_key)
    assert (profile.num_machines, profile.gpu_count) == (machines, gpus)
    assert {g.name for g in profile.gpus} == {model.name}
    assert profile.gpus[0].memory_total_bytes == model.memory_bytes


@pytest.mark.parametrize("model", GPU_MODELS, ids=lambda m: m.key)
def test_every_gpu_of_the_table_composes_and_says_what_is_assumed(model):
    profile = load_system(f"2x{model.key}")
    assert profile.gpu_count == 2 and profile.gpus[0].compute_capability == model.compute_capability
    if not profile.notes[0].startswith("preset modelled on"):
        assert "ASSUMED" in profile.notes[0]


@pytest.mark.parametrize(
    ("spec", "message"),
    [("2xA100", "A100-40GB and A100-80GB"), ("1xH1OO-80GB", "did you mean `1xH100-80GB`"), ("12xH100", "2x8x"),
     ("9xT4", "machines of 8")],
)
def test_bad_specs_say_what_to_write(spec, message):
    with pytest.raises(UsageError) as raised:
        load_system(spec)
    assert message in raised.value.message + " " + (raised.value.hint or "")


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_deepspeed_json_is_named_after_the_yaml(cli, in_tmp):
    assert cli("init", "--system", "8xH100-80GB", "--strategy", "zero3", "--defaults", "-o", "zero3.yaml").exit_code == 0
    assert cli("init", "--system", "8xH100-80GB", "--strategy", "zero2", "--defaults", "-o", "zero2.yaml").exit_code == 0
    assert json.loads((in_tmp / "zero3.ds.json").read_text())["zero_optimization"]["stage"] == 3
    assert json.loads((in_tmp / "zero2.ds.json").read_text())["zero_optimization"]["stage"] == 2
    assert yaml.safe_load((in_tmp / "zero3.plan.yaml").read_text())["files"] == {
        "accelerate": "zero3.yaml", "deepspeed": "zero3.ds.json"}
    result = cli("init", "--system", "8xH100-80GB", "--strategy", "zero2", "--defaults", "-o", "c.yaml",
                 "--ds-output", "deepspeed.json")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load((in_tmp / "c.yaml").read_text())["deepspeed_config"]["deepspeed_config_file"] == (
        "deepspeed.json")
    assert cli("check", "c.yaml").exit_code == 0


def test_answers_echo_as_the_files_spell_them_and_files_accept_both_spellings(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("launcher: per_node\nmain_process_ip: 10.0.0.1\nstrategy: FSDP_HYBRID\n")
    result = cli("init", "--system", "2x8xH100-80GB", "--answers", "answers.yaml", "--defaults")
    assert result.exit_code == 0, result.stderr
    assert "True" not in result.stderr and "False" not in result.stderr
    assert "Compile the model with torch.compile? false" in result.stderr
    config = yaml.safe_load((in_tmp / "accelerate.yaml").read_text())
    assert config["fsdp_config"]["fsdp_sharding_strategy"] == "HYBRID_SHARD"
    assert (config["num_machines"], config["num_processes"]) == (2, 16)
    assert cli("check", "accelerate.yaml").exit_code == 0


def test_help_lists_every_answer_key_with_its_values(cli):
    from accelwiz.wizard.answers import ENUM_VALUES
    from accelwiz.wizard.catalog import FLOW

    text = cli("init", "--help").stdout
    for question in FLOW:
        assert f"{question.key}:" in text, question.key
    for key, enum in ENUM_VALUES.items():
        assert "|".join(member.value for member in enum) in text, key


def test_trainer_mode_prints_the_training_arguments(cli, in_tmp):
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--for", "trainer", "--defaults")
    assert result.exit_code == 0, result.stderr
    plan = yaml.safe_load((in_tmp / "accelerate.plan.yaml").read_text())
    flags = plan["training"]["trainer_arguments"]
    assert " ".join(flags) in result.stderr
    assert flags[:4] == ["--per_device_train_batch_size", "1", "--gradient_accumulation_steps", "1"]
    assert "--bf16" in flags
    # transformers >= 5.24's name (5.25 here), exactly when the plan checkpoints
    assert ("--activation_checkpointing" in flags) is plan["training"]["gradient_checkpointing"]
    assert "--gradient_checkpointing" not in flags
    assert cli("check", "accelerate.yaml").exit_code == 0


def test_nvme_path_for_this_machine_must_be_on_an_nvme_drive(tmp_path):
    from accelwiz.probe.model import HostInfo, MachineProfile
    from accelwiz.wizard.suggest import nvme_drive_of, verify_nvme_path

    if nvme_drive_of(tmp_path) is not None:
        pytest.skip("the temporary directory is on an NVMe drive here")
    this_machine = MachineProfile(source="probe", host=HostInfo(memory_total_bytes=2**34))
    with pytest.raises(UsageError, match="not on a local NVMe drive"):
        verify_nvme_path(str(tmp_path), {}, this_machine)
    verify_nvme_path(str(tmp_path), {}, load_system("1xRTX4090"))  # another machine: its disks are not seen here


def test_costing_and_suggest_are_a_one_way_pair():
    source = (Path(__file__).parents[2] / "accelwiz" / "wizard" / "costing.py").read_text()
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert not {name for name in imported if name and name.startswith("accelwiz.wizard.suggest")}


def test_init_starts_without_the_heavy_imports():
    """`accelwiz init --help` stays fast: no torch, questionary or training library at import time."""
    import subprocess
    import sys

    heavy = ("torch", "questionary", "accelerate", "deepspeed", "transformers", "peft")
    code = ("import sys; from accelwiz.cli import app; import accelwiz.cli.init; "
            f"print([m for m in {heavy!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
