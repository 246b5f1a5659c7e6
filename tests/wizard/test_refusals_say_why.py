"""Refused answers say the real reason and the nearest valid answer: fp8 with DeepSpeed, a mistyped GPU in an
NxGPU spec, a mistyped answer-file key."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.probe.presets import close_gpu_keys, find_preset


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("strategy", [["--strategy", "zero1"], ["--strategy", "zero3"]], ids=["zero1", "zero3"])
def test_fp8_with_deepspeed_says_why_and_names_a_strategy_that_takes_it(cli, in_tmp, strategy):
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--precision", "fp8", *strategy,
                 "--defaults")
    assert result.exit_code == 2
    assert "fp8 is not offered with DeepSpeed ZeRO" in result.stderr
    assert "Ada/Hopper" not in result.stderr  # the machine is Hopper: that was the misleading part
    assert "--strategy fsdp" in result.stderr
    assert not (in_tmp / "accelerate.yaml").exists()


def test_the_strategy_the_fp8_refusal_names_takes_fp8(cli, in_tmp):
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--precision", "fp8", "--strategy",
                 "fsdp_full", "--defaults")
    assert result.exit_code in (0, 1), result.stderr  # 1: check's speed warning (ZeRO-1 is faster in bf16)
    assert "mixed_precision: fp8" in (in_tmp / "accelerate.yaml").read_text()


def test_fp8_on_ampere_names_the_gpu_generation(cli, in_tmp):
    result = cli("init", "--system", "8xA100-80GB", "--model", "llama-3.1-8b", "--precision", "fp8", "--strategy",
                 "fsdp_full", "--defaults")
    assert result.exit_code == 2
    assert "fp8 needs Ada or Hopper GPUs" in result.stderr and "sm_80" in result.stderr


def test_accelerate_refuses_mixed_precision_beside_a_deepspeed_config_file():
    """The reason the fp8 refusal gives, in the installed accelerate: the YAML's mixed_precision is one of the
    fields DeepSpeedPlugin refuses next to deepspeed_config_file."""
    dataclasses = pytest.importorskip("accelerate.utils.dataclasses")
    import inspect

    source = inspect.getsource(dataclasses.DeepSpeedPlugin._deepspeed_config_checks)
    assert "ACCELERATE_MIXED_PRECISION" in source


@pytest.mark.parametrize(("spec", "first"), [("2x8xH10O", "2x8xH100-80GB"), ("8xh10", "8xH100-80GB"),
                                              ("8xA1OO-80GB", "8xA100-80GB")])
def test_a_mistyped_gpu_suggests_the_gpu_it_looks_like(spec, first):
    with pytest.raises(UsageError) as refused:
        find_preset(spec)
    assert f"did you mean `{first}`" in refused.value.hint


def test_close_gpu_keys_compares_the_family_name():
    assert close_gpu_keys("H10O")[0] == "H100-80GB"
    assert close_gpu_keys("zzzz") == []


def test_a_mistyped_answer_key_gets_a_did_you_mean(cli, in_tmp):
    (in_tmp / "answers.yaml").write_text("lanucher: slurm\n")
    result = cli("init", "--answers", "answers.yaml", "--defaults", "--dry-run")
    assert result.exit_code == 2
    assert "unknown answer key(s): lanucher (did you mean launcher?)" in result.stderr


def test_the_precision_question_says_why_fp8_is_missing_under_deepspeed(cli, in_tmp):
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--strategy", "zero2", "--defaults",
                 "--dry-run")
    assert result.exit_code in (0, 1), result.stderr
    line = next(line for line in result.stderr.splitlines() if line.startswith("Mixed precision?"))
    assert "fp8 is not offered with DeepSpeed ZeRO" in line
    fsdp = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--strategy", "fsdp_full", "--defaults",
               "--dry-run")
    assert "fp8 is not offered" not in fsdp.stderr


def test_fp8_asked_up_front_makes_the_recommender_pick_a_strategy_that_takes_it(cli, in_tmp):
    """--precision fp8 without --strategy: the fastest fitting strategy without DeepSpeed (ZeRO-1 is picked for
    bf16 here), and the strategy note says why."""
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--precision", "fp8", "--defaults")
    assert result.exit_code == 0, result.stderr
    config = (in_tmp / "accelerate.yaml").read_text()
    assert "distributed_type: FSDP" in config and "mixed_precision: fp8" in config
    note = next(line for line in result.stderr.splitlines() if line.startswith("How should training be"))
    assert "fp8 is not offered with DeepSpeed ZeRO" in note
    assert "ZeRO-1 fits" not in result.stderr  # AW503 does not advise DeepSpeed for an fp8 run
    bf16 = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--defaults", "--dry-run")
    assert "zero1" in next(line for line in bf16.stderr.splitlines() if line.startswith("How should training be"))
