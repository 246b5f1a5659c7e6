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
    """llama-8b, micro-batch 2 at 1536 tokens on 8xL40S: ZeRO-2 is tight, FSDP2 shard-grad-op fits (38.5 of the
    44.3 GiB CUDA can allocate; at 2048 it is tight too since verdicts judge CUDA's total, not NVML's 45.0). init
    pre-selected ZeRO-3 and its own review warned AW503 'FSDP2 shard-grad-op fits', a choice its menu did not have."""
    (in_tmp / "answers.yaml").write_text("system: 8xL40S\nmodel: llama-8b\nmicro_batch: 2\nseq_len: 1536\n")
    result = cli("init", "--answers", "answers.yaml", "--defaults")
    assert result.exit_code == 0, result.stderr
    assert "AW503" not in result.stderr
    assert "How should training be distributed? fsdp_grad_op" in result.stderr
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
    from accelwiz.wizard.answers import StrategyChoice
    from accelwiz.wizard.costing import offered_strategies

    for gpus, nodes in ((2, 1), (8, 1), (8, 2)):
        assert offered_strategies(gpus, nodes) == candidate_strategies(gpus, nodes)
        assert {s.kind for s in candidate_strategies(gpus, nodes)} <= {c.value for c in StrategyChoice}


def test_fsdp_grad_op_is_refused_on_one_gpu_and_with_parameter_offload(cli, in_tmp):
    one = cli("init", "--defaults", "--system", "1xA100-80GB", "--model", "gpt2", "--strategy", "fsdp_grad_op")
    assert one.exit_code == 2
    assert "'fsdp_grad_op' is not one of the choices here: single, zero2, zero3" in one.stderr
    (in_tmp / "answers.yaml").write_text("system: 8xH100-80GB\nmodel: gpt2\nstrategy: fsdp_grad_op\n"
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


# --- 3. small frictions --------------------------------------------------------------------------------------


def test_run_config_naming_a_folder_says_so_and_names_the_yamls_inside(cli, tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    for name in ("zero2.yaml", "ddp.yaml", "ddp.plan.yaml", "notes.txt"):
        (folder / name).write_text("distributed_type: 'NO'\n")
    result = cli("run", "--config", str(folder), "--dry-run")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"config `{folder}` is a folder, not an Accelerate config; it holds ddp.yaml, zero2.yaml" in message
    assert f"--config {folder / 'ddp.yaml'}" in message and "not found" not in message
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = cli("run", "--config", str(empty), "--dry-run")
    assert nothing.exit_code == 2 and "is a folder with no YAML in it" in nothing.stderr


def test_run_help_lists_every_flag_of_the_built_in_trainer():
    """`--save-every` was missing from `run --help`: run passes the trainer's flags it does not declare on to the
    trainer (`run --save-every 5` works), so the help never showed them. Now the epilog lists each one."""
    from accelwiz.trainer.options import build_parser

    help_text = accelwiz("run", "--help", cwd=Path.cwd()).stdout
    flags = [o for a in build_parser()._actions for o in a.option_strings if o.startswith("--")]
    assert "--save-every" in flags
    assert [flag for flag in flags if flag not in ("--help", "--config") and flag not in help_text] == []
    assert "--save-every N: Save a checkpoint every N steps" in help_text


def test_trainer_flags_given_to_run_directly_reach_the_trainer(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "--model", "tiny", "--defaults").exit_code == 0
    result = cli("run", "--save-every", "5", "--keep-checkpoints", "3", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "--save-every 5 --keep-checkpoints 3" in result.stdout


def test_init_model_help_names_hub_ids_and_local_folders():
    text = " ".join(accelwiz("init", "--help", cwd=Path.cwd()).stdout.split())
    assert "a hub id (Qwen/Qwen2.5-7B), a local checkpoint folder or config.json" in text


def test_a_plan_without_a_model_is_refused_as_one(cli, in_tmp):
    """init without --model records no model; run said "`none` is a parameter count, which has no weights"."""
    assert cli("init", "--defaults").exit_code == 0
    plan = yaml.safe_load((in_tmp / "accelerate.plan.yaml").read_text())
    assert plan["model"]["source"] == "none"
    refused = cli("run", "--dry-run")
    message = " ".join(refused.stderr.split())
    assert refused.exit_code == 2 and "parameter count" not in message
    assert "accelerate.plan.yaml names no model to train: `accelwiz init` wrote it without --model" in message
    assert "pass --model NAME (`--model tiny`" in message
    # a plan an older init wrote (`name: none`, source parameters, no count) reads the same
    old = (in_tmp / "accelerate.plan.yaml").read_text().replace("source: none", "source: parameters")
    (in_tmp / "accelerate.plan.yaml").write_text(old)
    assert "wrote it without --model" in cli("run", "--dry-run").stderr
    assert cli("run", "--model", "tiny", "--seq-len", "256", "--dry-run").exit_code == 0


def test_init_writes_and_passes_todays_checkpointing_name():
    """transformers 5.24 renamed TrainingArguments' gradient_checkpointing (the old name warns FutureWarning in
    every process): the flags init prints and the DPO/GRPO config run builds use the installed name, and
    transformers parses them without a deprecation warning."""
    import dataclasses
    import warnings

    from transformers import HfArgumentParser, TrainingArguments

    from accelwiz.trainer.trl_run import _checkpointing_name
    from accelwiz.wizard.build import checkpointing_flag

    fields = {f.name for f in dataclasses.fields(TrainingArguments)}
    assert _checkpointing_name() in fields and checkpointing_flag() == f"--{_checkpointing_name()}"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
            ["--output_dir", "out", "--use_cpu", checkpointing_flag()])
        from trl import DPOConfig

        config = DPOConfig(output_dir="out", use_cpu=True, report_to="none", **{_checkpointing_name(): True})
    assert args.gradient_checkpointing is True and config.gradient_checkpointing is True


def test_an_older_transformers_on_the_target_gets_the_old_flag():
    from accelwiz.probe.profiles import load_system
    from accelwiz.wizard.build import checkpointing_flag

    old = load_system("8xH100-80GB").model_copy(update={"packages": {"transformers": "4.57.1"}})
    new = load_system("8xH100-80GB").model_copy(update={"packages": {"transformers": "5.24.0"}})
    assert (checkpointing_flag(old), checkpointing_flag(new)) == ("--gradient_checkpointing",
                                                                  "--activation_checkpointing")


# --- help: workflow order, examples in every command, examples kept one a line ----------------------------


def test_root_help_lists_the_workflow_first_and_every_command_has_examples():
    from accelwiz.cli import COMMANDS

    root = accelwiz("--help", cwd=Path.cwd()).stdout
    listed = [line.split()[0] for line in root.split("Commands:")[1].splitlines() if line.startswith("  ")]
    assert listed[:5] == ["probe", "init", "check", "estimate", "run"] and sorted(listed) == sorted(COMMANDS)
    assert "124 a stopped rank" in " ".join(root.split())
    for name in COMMANDS:
        text = accelwiz(name, "--help", cwd=Path.cwd()).stdout
        assert "Example" in text and f"accelwiz {name} " in text.partition("Example")[2], name


def test_help_examples_stay_one_a_line_at_80_columns():
    """Plain click help rewrapped the epilog: `$ accelwiz init --list-templates` ran on after the previous
    example's comment."""
    text = accelwiz("init", "--help", cwd=Path.cwd()).stdout
    assert "\n    $ accelwiz init --list-templates\n" in text
    run = accelwiz("run", "--help", cwd=Path.cwd()).stdout
    assert "\n    $ accelwiz run train.py -- --lr 3e-4      # your script; its flags after --\n" in run


@pytest.mark.parametrize("name", ["probe", "init", "run", "env", "migrate", "convert", "rule", "schema"])
def test_help_fits_80_columns(name):
    """Each line of the help at 80 columns (examples and answer keys are kept as written, so they must fit)."""
    text = accelwiz(name, "--help", cwd=Path.cwd()).stdout
    assert [line for line in text.splitlines() if len(line) > 80] == []


def test_check_takes_accelerate_yaml_when_no_file_is_named(cli, in_tmp):
    """`run` defaults to accelerate.yaml; `check` said "Missing argument 'files'". Now it checks the same file,
    and where there is none it says so in one line with the command that writes one."""
    refused = cli("check")
    assert refused.exit_code == 2 and "no accelerate.yaml here" in refused.stderr and "accelwiz init" in refused.stderr
    assert cli("init", "--model", "tiny", "--defaults").exit_code == 0
    named, default = cli("check", "accelerate.yaml"), cli("check")
    assert default.exit_code == named.exit_code == 0
    assert (default.stdout, default.stderr) == (named.stdout, named.stderr)
    with_trainer = cli("check", "--", "--bf16")  # the Trainer's arguments after `--`, the file still defaulted
    assert "AW7" in with_trainer.stdout + with_trainer.stderr
