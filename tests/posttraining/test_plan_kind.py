"""The plan carries the kind of training (issue 19): a DPO or GRPO plan trains through TRL without flags, and
`check` judges it with TRL's rules; the post-training settings are resolved once (accelwiz.resolution)."""

from __future__ import annotations

import pytest

from accelwiz.config.trl_arguments import with_trl
from accelwiz.errors import InputError, UsageError
from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanSystem, PlanTraining, dump_plan, load_plan
from accelwiz.resolution.posttraining import resolve_posttraining
from accelwiz.trainer.options import parse_args
from accelwiz.trainer.settings import resolve_settings

SINGLE = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"


def write_plan(tmp_path, **training) -> None:
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    plan = PlanFile(files=PlanFiles(accelerate="accelerate.yaml"), system=PlanSystem(name="local"),
                    model=PlanModel(name="tiny"), training=PlanTraining(micro_batch=2, sequence_length=64, **training))
    (tmp_path / "accelerate.plan.yaml").write_text(dump_plan(plan))


def test_a_grpo_plan_gives_the_trainer_its_kind_and_settings_where_no_flag_does(tmp_path):
    write_plan(tmp_path, kind="grpo", num_generations=4, max_completion_length=16, reward="reward.py:length")
    config = str(tmp_path / "accelerate.yaml")
    post = resolve_settings(parse_args(["--config", config])).post
    assert (post.kind.value, post.num_generations.value, post.max_completion_length.value, post.reward.value) == (
        "grpo", 4, 16, f"{tmp_path / 'reward.py'}:length")  # the reward's file is relative to the plan
    assert post.kind.source == "plan" and post.max_prompt_length.source == "default"
    # a flag replaces the plan's field, even one equal to a default
    flagged = resolve_settings(parse_args(["--config", config, "--num-generations", "8"])).post
    assert (flagged.num_generations.value, flagged.num_generations.source) == (8, "flag")


def test_the_run_refuses_a_prompt_and_completion_beyond_the_model_positions(tmp_path):
    write_plan(tmp_path, kind="dpo", max_prompt_length=200, max_completion_length=100)
    with pytest.raises(UsageError, match=r"longer than the 256 positions of tiny: max_prompt_length 200 \(plan\)"):
        resolve_settings(parse_args(["--config", str(tmp_path / "accelerate.yaml")]))


def test_defaults_are_trl_s_capped_at_the_model_positions():
    post = resolve_posttraining(flags={"kind": "dpo"})
    assert (post.max_prompt_length.value, post.max_completion_length.value, post.num_generations.value) == (512, 512, 8)
    capped = resolve_posttraining(flags={"kind": "dpo"}, max_positions=256)
    assert (capped.max_prompt_length.value, capped.max_completion_length.value) == (128, 128)


def test_trl_arguments_lie_between_the_plan_and_the_flags(tmp_path):
    write_plan(tmp_path, kind="grpo", num_generations=4, max_prompt_length=64, beta=0.1)
    plan = load_plan(tmp_path / "accelerate.plan.yaml")
    args = with_trl(None, "grpo", None, ["--num_generations", "6", "--use_vllm", "--vllm_mode", "server"])
    post = resolve_posttraining(plan=plan, trl_args=args, flags={"beta": 0.0})
    assert (post.num_generations.value, post.num_generations.source) == (6, "trl arguments")
    assert post.generation.value == "vllm-server"
    assert (post.beta.value, post.beta.source) == (0.0, "flag")
    assert (post.max_prompt_length.value, post.max_prompt_length.source) == (64, "plan")


def test_dpo_max_length_is_split_around_the_prompt_length_given_elsewhere(tmp_path):
    write_plan(tmp_path, kind="dpo", max_prompt_length=100)
    plan = load_plan(tmp_path / "accelerate.plan.yaml")
    args = with_trl(None, "dpo", None, ["--max_length", "300"])
    post = resolve_posttraining(plan=plan, trl_args=args)
    assert (post.max_prompt_length.value, post.max_completion_length.value) == (100, 200)
    halves = resolve_posttraining(trl_args=args)
    assert (halves.max_prompt_length.value, halves.max_completion_length.value) == (150, 150)


@pytest.mark.parametrize(("flags", "message"), [({"kind": "ppo"}, "invalid kind 'ppo' (flag)"),
                                                ({"generation": "vllm"}, "invalid generation"),
                                                ({"num_generations": 0}, "num_generations must be a positive")])
def test_values_no_layer_may_hold_are_refused_with_their_source(flags, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_posttraining(flags=flags)


def test_check_takes_the_kind_from_the_plan(tmp_path, cli):
    # GRPO with 2 x 1 completions per step cannot hold 4 generations per prompt: TRL refuses it at start-up
    write_plan(tmp_path, kind="grpo", num_generations=4)
    result = cli("check", str(tmp_path / "accelerate.yaml"), "--", "--per_device_train_batch_size", "2",
                 "--num_generations", "4")
    assert result.exit_code == 1 and "AW801" in result.stdout
    sft = cli("check", str(tmp_path / "accelerate.yaml"), "--kind", "sft", "--", "--per_device_train_batch_size",
              "2", "--num_generations", "4")
    assert "AW801" not in sft.stdout


def test_the_plan_refuses_a_kind_it_does_not_know_and_a_single_generation(tmp_path):
    write_plan(tmp_path)
    text = (tmp_path / "accelerate.plan.yaml").read_text()
    for bad in ("  kind: ppo\n", "  num_generations: 1\n"):
        (tmp_path / "accelerate.plan.yaml").write_text(text.replace("  kind: sft\n", bad))
        with pytest.raises(InputError, match="invalid plan at `training"):
            load_plan(tmp_path / "accelerate.plan.yaml")


def test_a_grpo_plan_is_checked_with_the_arguments_the_built_in_trainer_hands_trl(tmp_path, cli):
    # init's defaults (micro-batch 1, one process) cannot hold TRL's 8 generations per prompt
    write_plan(tmp_path, kind="grpo", precision="fp32")
    result = cli("check", str(tmp_path / "accelerate.yaml"))
    assert result.exit_code == 1 and "AW801" in result.stdout and "num_generations 8" in result.stdout
    assert "the arguments the built-in trainer hands TRL: --per_device_train_batch_size 2" in result.stderr
    assert "--bf16 False" in result.stderr  # the plan's precision, not TRL's bf16 default (AW704/AW114 stay quiet)
    write_plan(tmp_path, kind="grpo", precision="fp32", num_generations=2)
    fits = cli("check", str(tmp_path / "accelerate.yaml"))
    assert fits.exit_code == 0, fits.stdout


def test_trl_config_fields_carry_the_run_s_precision_and_lengths():
    from accelwiz.resolution.posttraining import trl_config_fields
    from accelwiz.resolution.workload import resolve_workload

    post = resolve_posttraining(flags={"kind": "dpo", "max_prompt_length": 64, "max_completion_length": 32})
    written = trl_config_fields(resolve_workload(flags={"precision": "fp16", "micro_batch": 2}), post)
    assert (written["fp16"], written["bf16"], written["max_length"], written["per_device_train_batch_size"]) == (
        True, False, 96, 2)
    # a precision nobody wrote: both off, so transformers takes the launcher's ACCELERATE_MIXED_PRECISION
    unwritten = trl_config_fields(resolve_workload(), post)
    assert (unwritten["fp16"], unwritten["bf16"]) == (False, False)


def test_run_refuses_a_grpo_plan_trl_would_refuse_and_takes_the_flags_that_fix_it(tmp_path, monkeypatch):
    import subprocess
    import sys

    write_plan(tmp_path, kind="grpo")
    monkeypatch.chdir(tmp_path)
    refused = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--dry-run"], capture_output=True, text=True)
    assert refused.returncode == 1 and "AW801" in refused.stderr + refused.stdout
    fixed = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--dry-run", "--", "--num-generations", "2"],
                           capture_output=True, text=True)
    # past the preflight (micro-batch 2 x 1 process holds groups of 2); the toy model is refused next, by the
    # trainer's own check
    assert fixed.returncode == 2 and "trains a pretrained checkpoint" in fixed.stderr, fixed.stderr
