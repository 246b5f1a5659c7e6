"""AW814 (ds3_gather_for_generation false under ZeRO-3, trl#3858) and the Trainer's check of a written
scheduler.params.total_num_steps that no run can have (AW702, transformers#29348)."""

from __future__ import annotations

import json

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import TRL_FIELDS, with_trl
from tests.rules.helpers import codes, diagnostics

ZERO3 = "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: true\n"


def grpo(argv: list[str]):
    return with_trl(parse_argv(argv), "grpo", None, argv)


def aw805(path, argv):
    return codes(path, select=("AW814",), training_args=grpo(argv))


def test_fires_without_the_gather_under_zero3_and_not_otherwise(write):
    zero3 = write("zero3.yaml", ZERO3)
    off = ["--ds3_gather_for_generation", "false", "--num_generations", "8"]
    assert aw805(zero3, off) == {"AW814"}
    assert not aw805(zero3, ["--num_generations", "8"])  # TRL's default gathers
    assert not aw805(zero3, [*off, "--use_vllm"])  # vLLM generation never reads the flag
    zero2 = write("zero2.yaml", ZERO3.replace("zero_stage: 3", "zero_stage: 2"))
    assert not aw805(zero2, off)  # only ZeRO-3 partitions the weights (DistributedBackend.is_zero3)


def test_reads_the_stage_of_the_trainers_deepspeed_json(write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("ds.json", json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}))
    plain = write("accelerate.yaml", "distributed_type: 'NO'\n")
    argv = ["--deepspeed", "ds.json", "--ds3_gather_for_generation", "false"]
    (found,) = diagnostics(plain, select=("AW814",), training_args=grpo(argv))
    assert "ds3_gather_for_generation false" in found.message and "512" in found.message


def test_the_default_is_trls():
    from trl import GRPOConfig

    default = {f.name: f.default for f in GRPOConfig.__dataclass_fields__.values()}["ds3_gather_for_generation"]
    assert TRL_FIELDS["ds3_gather_for_generation"][2] is default is True


@pytest.mark.parametrize("total,argv,expected", [
    (0, [], True),  # transformers#29348: 0 vs the calculated num_training_steps
    (-1, [], True),
    (1000, [], False),  # depends on the data: checked at train time
    ("auto", [], False),
    (0, ["--max_steps", "260"], True),
    (260, ["--max_steps", "260"], False),
])
def test_a_total_num_steps_below_one_never_matches_the_trainer(write, tmp_path, monkeypatch, total, argv, expected):
    monkeypatch.chdir(tmp_path)
    config = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},
              "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": total, "warmup_min_lr": "auto",
                                                                 "warmup_max_lr": "auto",
                                                                 "warmup_num_steps": "auto"}}}
    path = write("ds.json", json.dumps(config))
    found = diagnostics(path, select=("AW702",), training_args=parse_argv(["--deepspeed", "ds.json", *argv]))
    assert any("total_num_steps" in d.message for d in found) is expected


@pytest.mark.parametrize("steps", [1, 260])
def test_transformers_refuses_a_total_num_steps_of_zero_for_any_run(tmp_path, steps):
    """The real trainer_config_finalize: the smallest run (1 step) already refuses the written 0."""
    from transformers import TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    config = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},
              "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": 0}}}
    hf = HfTrainerDeepSpeedConfig(config)
    args = TrainingArguments(output_dir=str(tmp_path), report_to=[])
    hf.trainer_config_process(args)
    with pytest.raises(ValueError, match="total_num_steps=0 vs hf num_training_steps"):
        hf.trainer_config_finalize(args, model=None, num_training_steps=steps)
