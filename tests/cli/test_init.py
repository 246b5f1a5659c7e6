"""`accelwiz init` without a terminal: defaults, answer files, options, dry runs, overwrites and templates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from accelwiz.wizard.templates import list_templates
from tests.profiles import machine


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("local", "expected"), [
    (machine(), ("NO", True, 1, "no")),  # no GPU: a working CPU config
    (machine(8, "H100-80GB", ram_gib=2048), ("MULTI_GPU", False, 8, "bf16")),
], ids=["cpu", "8xH100"])
def test_defaults_write_a_config_that_check_accepts(cli, in_tmp, pin_local, local, expected):
    pin_local(local)  # init without --system plans for this machine: pinned, so both cases run everywhere
    result = cli("init", "--defaults", "-o", "accelerate.yaml")
    assert result.exit_code == 0, result.stderr
    assert cli("check", "accelerate.yaml").exit_code == 0
    config = yaml.safe_load((in_tmp / "accelerate.yaml").read_text())
    assert (
        config["distributed_type"],
        config["use_cpu"],
        config["num_processes"],
        config["mixed_precision"],
    ) == expected


def test_header_says_how_when_and_for_what(cli, in_tmp):
    assert cli("init", "--defaults", "--system", "8xH100-80GB", "--model", "llama-3.1-8b").exit_code == 0
    text = (in_tmp / "accelerate.yaml").read_text()
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("8 x NVIDIA H100" in line for line in header)
    assert any(line.startswith("# Memory:") and "GiB per GPU" in line for line in header)
    assert any("accelerate launch --config_file accelerate.yaml" in line for line in header)
    assert "# Schema for editors: `accelwiz schema --which accelerate > accelerate-config.schema.json`" in text


@pytest.mark.parametrize("name", ["accelerate.yaml", "accelerate.plan.yaml"])
def test_written_files_carry_no_path_of_this_machine_and_no_invented_url(cli, in_tmp, name):
    """A $schema modeline named the writing machine's install folder (YAML) or a URL that serves nothing (plan);
    both headers now say how to get the schema instead."""
    import accelwiz

    assert cli("init", "--defaults", "--system", "2x8xH100", "--model", "llama-3.1-70b", "--strategy",
               "zero3").exit_code == 0
    text = (in_tmp / name).read_text()
    assert "yaml-language-server: $schema=" not in text
    assert str(Path(accelwiz.__file__).parent.parent) not in text and "://" not in text
    which = "plan" if "plan" in name else "accelerate"
    assert any(line.startswith(f"# Schema for editors: `accelwiz schema --which {which} >")
               for line in text.splitlines())


def test_options_and_answers_file_combine(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("micro_batch: 4\ngradient_accumulation: 8\ngradient_clipping: 0\n")
    result = cli(
        "init",
        "--answers",
        "answers.yaml",
        "--defaults",
        "--system",
        "8xH100-80GB",
        "--strategy",
        "zero2",
        "--precision",
        "bf16",
        "--gpus",
        "4",
    )
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load((in_tmp / "accelerate.yaml").read_text())
    deepspeed = json.loads((in_tmp / "accelerate.ds.json").read_text())
    assert (
        config["num_processes"] == 4
        and config["deepspeed_config"]["deepspeed_config_file"] == "accelerate.ds.json"
    )
    assert (
        deepspeed["train_micro_batch_size_per_gpu"],
        deepspeed["gradient_accumulation_steps"],
        deepspeed["gradient_clipping"],
        deepspeed["zero_optimization"]["stage"],
    ) == (4, 8, 0.0, 2)
    assert cli("check", "accelerate.yaml").exit_code == 0


def test_unknown_answer_keys_are_a_usage_error_listing_valid_ones(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("zero_stage: 3\n")
    result = cli("init", "--answers", "answers.yaml", "--defaults")
    assert result.exit_code == 2
    assert "zero_stage" in result.stderr and "strategy" in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


def test_without_a_terminal_missing_answers_exit_2_instead_of_hanging(cli, in_tmp):
    result = cli("init", "--system", "8xH100-80GB")
    assert result.exit_code == 2
    assert "no terminal" in result.stderr and "--defaults" in result.stderr
    assert list(in_tmp.iterdir()) == []


def test_a_complete_answers_file_needs_no_terminal(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text(
        yaml.safe_dump(
            {
                "system": "1xT4",
                "model": "",
                "micro_batch": 1,
                "num_machines": 1,
                "gpus": 1,
                "strategy": "single",
                "precision": "fp16",
                "gradient_accumulation": 2,
                "gradient_clipping": 1.0,
                "torch_compile": False,
            }
        )
    )
    result = cli("init", "--answers", "answers.yaml")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load((in_tmp / "accelerate.yaml").read_text())["mixed_precision"] == "fp16"


def test_inconsistent_answers_are_a_usage_error(cli, in_tmp):
    result = cli("init", "--defaults", "--system", "1xT4", "--strategy", "ddp")
    assert result.exit_code == 2
    assert not (in_tmp / "accelerate.yaml").exists()


def test_dry_run_prints_and_writes_nothing(cli, in_tmp):
    result = cli("init", "--defaults", "--system", "8xH100-80GB", "--strategy", "zero3", "--dry-run")
    assert result.exit_code == 0
    assert "distributed_type: DEEPSPEED" in result.stdout and '"stage": 3' in result.stdout
    assert list(in_tmp.iterdir()) == []


def test_existing_file_needs_force_and_keeps_a_backup(cli, in_tmp):
    (in_tmp / "accelerate.yaml").write_text("# mine\ndistributed_type: 'NO'\n")
    refused = cli("init", "--defaults")
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert (in_tmp / "accelerate.yaml").read_text() == "# mine\ndistributed_type: 'NO'\n"
    assert cli("init", "--defaults", "--force").exit_code == 0
    assert (in_tmp / "accelerate.yaml.bak").read_text() == "# mine\ndistributed_type: 'NO'\n"
    assert "Written by: accelwiz init" in (in_tmp / "accelerate.yaml").read_text()


def test_an_existing_json_blocks_the_pair(cli, in_tmp):
    (in_tmp / "accelerate.ds.json").write_text("{}\n")
    result = cli("init", "--defaults", "--system", "8xH100-80GB", "--strategy", "zero2")
    assert result.exit_code == 2
    assert not (in_tmp / "accelerate.yaml").exists()  # both files or neither


def test_list_templates(cli):
    result = cli("init", "--list-templates")
    assert result.exit_code == 0
    assert {t.name for t in list_templates()} == {line.split()[0] for line in result.stdout.splitlines()}


def test_template_copies_yaml_and_json_and_repoints_the_reference(cli, in_tmp):
    result = cli("init", "--template", "zero3-offload", "-o", "configs/accelerate.yaml")
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load((in_tmp / "configs/accelerate.yaml").read_text())
    assert config["deepspeed_config"]["deepspeed_config_file"] == "configs/accelerate.ds.json"
    assert json.loads((in_tmp / "configs/accelerate.ds.json").read_text())["zero_optimization"]["stage"] == 3
    checked = cli("check", "configs/accelerate.yaml")
    assert checked.exit_code == 0 and "warning" not in checked.stdout


def test_unknown_template_suggests_a_close_name(cli, in_tmp):
    result = cli("init", "--template", "zero-3")
    assert result.exit_code == 2 and "zero3" in result.stderr


def test_an_unknown_model_fails_at_its_question_with_suggestions(cli, in_tmp):
    result = cli("init", "--defaults", "--system", "8xH100-80GB", "--model", "lama-3.1-8b")
    assert result.exit_code == 2 and "llama" in result.stderr
    assert list(in_tmp.iterdir()) == []


def test_when_nothing_fits_init_says_what_would_and_writes_nothing(cli, in_tmp):
    # Not even QLoRA with offload at a shorter sequence fits a 405B model on one T4.
    result = cli("init", "--defaults", "--system", "1xT4", "--model", "llama-3.1-405b")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "nothing fits" in errors[0] and "what would:" in errors[0]
    assert "nothing was written" in result.stderr
    assert list(in_tmp.iterdir()) == []


def test_answers_for_questions_that_do_not_apply_are_reported(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("zero3_init: true\n")
    result = cli(
        "init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB", "--strategy", "ddp"
    )
    assert result.exit_code == 0
    assert "`zero3_init` ignored" in result.stderr


def test_closed_stdin_in_a_real_process_exits_2_without_waiting(in_tmp):
    import shutil
    import subprocess

    if shutil.which("accelwiz") is None:
        pytest.skip("the accelwiz script is not installed")
    done = subprocess.run(
        ["accelwiz", "init", "--system", "1xT4"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "no terminal" in done.stderr


def test_a_copied_template_says_how_to_get_the_schema(cli, in_tmp):
    """The template's ../schemas/ modeline leads nowhere from the copy, and an absolute one is this machine's."""
    assert cli("init", "--template", "ddp").exit_code == 0
    text = (in_tmp / "accelerate.yaml").read_text()
    assert "$schema=" not in text
    assert "# Schema for editors: `accelwiz schema --which accelerate > accelerate-config.schema.json`" in text


def test_a_two_node_plan_writes_two_machines_and_sixteen_processes(cli, in_tmp):
    # A 2-node plan used to write num_machines 1 / num_processes 8 (half the planned global batch under SLURM).
    result = cli("init", "--defaults", "--system", "2x8xH100", "--model", "mixtral-8x7b")
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load((in_tmp / "accelerate.yaml").read_text())
    assert (config["num_machines"], config["num_processes"]) == (2, 16)
    plan = yaml.safe_load((in_tmp / "accelerate.plan.yaml").read_text())
    assert plan["launcher"]["kind"] == "slurm" and plan["system"]["machines"] == 2
    assert "AW501" not in result.stderr
    assert cli("check", "accelerate.yaml").exit_code == 0


def test_slurm_multi_node_that_does_not_fit_is_still_refused(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("strategy: zero1\nregime: full\n")
    result = cli(
        "init", "--answers", "answers.yaml", "--defaults", "--system", "2x8xH100", "--model", "mixtral-8x7b"
    )
    assert result.exit_code == 1
    assert "nothing fits: full fine-tuning with ZeRO-1" in result.stderr and "GPU memory" in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


CPU_ONLY = str(Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json")


@pytest.mark.parametrize(
    ("answers", "system", "named"),
    [
        # used to write a one-process CPU config with only a warning that the answers were ignored
        ("strategy: zero3\noffload_optimizer: true\noffload_params: true\n", CPU_ONLY, "strategy: zero3"),
        ("precision: bf16\n", CPU_ONLY, "precision: bf16"),
        ("strategy: ddp\noffload_optimizer: true\n", "8xH100-80GB", "offload_optimizer: True"),
        ("machine_rank: 1\n", "8xH100-80GB", "machine_rank: 1"),
    ],
)
def test_an_ignored_answer_that_contradicts_the_config_is_a_usage_error(
    cli, in_tmp, answers, system, named
):
    (in_tmp / "answers.yaml").write_text(answers)
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", system)
    assert result.exit_code == 2, result.stderr
    assert f"`{named}` cannot apply" in result.stderr and "hint:" in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


def test_an_ignored_answer_that_agrees_with_the_config_is_only_reported(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("strategy: single\nprecision: 'no'\n")
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", CPU_ONLY)
    assert result.exit_code == 0, result.stderr
    assert "`strategy` ignored" in result.stderr


def test_infinite_gradient_clipping_is_a_usage_error(cli, in_tmp):
    # used to reach the DeepSpeed JSON as `Infinity` and fail as "invalid JSON"
    (in_tmp / "answers.yaml").write_text("strategy: zero2\ngradient_clipping: .inf\n")
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB")
    assert result.exit_code == 2
    assert "gradient_clipping" in result.stderr and "invalid JSON" not in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


def test_a_target_global_batch_sets_the_accumulation(cli, in_tmp):
    # 256 = 2 (micro-batch) x 16 x 8 (processes); giving the target implies wanting it
    (in_tmp / "answers.yaml").write_text("micro_batch: 2\ntarget_global_batch: 256\n")
    result = cli(
        "init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB", "--strategy", "zero2"
    )
    assert result.exit_code == 0, result.stderr
    assert "Gradient accumulation steps?" not in result.stderr
    deepspeed = json.loads((in_tmp / "accelerate.ds.json").read_text())
    assert (deepspeed["train_micro_batch_size_per_gpu"], deepspeed["gradient_accumulation_steps"]) == (2, 16)
    assert "global batch 256" in (in_tmp / "accelerate.yaml").read_text()


def test_a_target_global_batch_that_does_not_divide_names_the_nearest_valid_ones(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("micro_batch: 2\ntarget_global_batch: 100\n")
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB")
    assert result.exit_code == 2
    assert "100 is not a multiple of 16" in result.stderr
    assert "96 (accumulation 6) or 112 (accumulation 7)" in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


def test_a_target_global_batch_below_one_step_offers_the_smallest(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("micro_batch: 4\ntarget_global_batch: 8\n")
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB")
    assert result.exit_code == 2
    assert "8 is not a multiple of 32" in result.stderr and "32 (accumulation 1)" in result.stderr


def test_a_target_global_batch_and_a_different_accumulation_contradict(cli, in_tmp):
    answers = "micro_batch: 2\ntarget_global_batch: 64\ngradient_accumulation: 8\n"
    (in_tmp / "answers.yaml").write_text(answers)
    result = cli("init", "--defaults", "--answers", "answers.yaml", "--system", "8xH100-80GB")
    assert result.exit_code == 2
    assert "`gradient_accumulation: 8` cannot apply" in result.stderr


def test_the_multinode_template_names_no_made_up_address_and_its_copy_checks_clean(cli, in_tmp):
    """The template left main_process_ip 192.0.2.1 (a documentation address nodes would wait on); now the
    launcher gives the address and the template's plan, copied beside the YAML, says which launcher."""
    assert cli("init", "--template", "multinode-zero3", "-o", "mn.yaml").exit_code == 0
    config = yaml.safe_load((in_tmp / "mn.yaml").read_text())
    assert config["num_machines"] == 2 and "main_process_ip" not in config
    plan = yaml.safe_load((in_tmp / "mn.plan.yaml").read_text())
    assert plan["files"] == {"accelerate": "mn.yaml", "deepspeed": "mn.ds.json"}
    assert plan["launcher"]["kind"] == "slurm"
    checked = cli("check", "mn.yaml")
    assert checked.exit_code == 0 and "AW104" not in checked.stdout + checked.stderr


def test_a_template_plan_is_not_listed_as_a_template():
    assert all(not t.name.endswith(".plan") for t in list_templates())
