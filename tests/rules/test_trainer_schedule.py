"""AW709: load_best_model_at_end against the evaluation and save schedule. The rule fires on the schedules
`TrainingArguments` refuses and stays quiet on those it accepts; the differential test builds the real
`TrainingArguments` (transformers 5) for each schedule and compares."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv, parse_file
from accelwiz.rules.trainer_schedule import best_model_schedule_problem, effective_eval_steps
from tests.rules.helpers import codes

YAML = "distributed_type: MULTI_GPU\nnum_processes: 2\n"

# (arguments, refused by TrainingArguments): every branch of _validate_args' load_best_model_at_end block
SCHEDULES = [
    (["--load_best_model_at_end"], True),  # the defaults: evaluate "no", save "steps"
    (["--load_best_model_at_end", "--save_steps", "1"], True),  # transformers#12685's command line
    (["--load_best_model_at_end", "--eval_strategy", "epoch", "--save_strategy", "steps"], True),
    (["--load_best_model_at_end", "--eval_strategy", "epoch", "--save_strategy", "epoch"], False),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "100", "--save_steps", "500"], False),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "300", "--save_steps", "500"], True),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--logging_steps", "50", "--save_steps", "100"],
     False),  # eval_steps falls back to logging_steps
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--logging_steps", "30", "--save_steps", "100"], True),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.1", "--save_steps", "0.2"], False),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.1", "--save_steps", "0.25"], True),
    (["--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.1", "--save_steps", "100"], True),
    (["--load_best_model_at_end", "--save_strategy", "best", "--eval_strategy", "steps"], False),
    (["--eval_strategy", "epoch", "--save_steps", "7"], False),  # no load_best_model_at_end: no constraint
]


@pytest.mark.parametrize("argv,refused", SCHEDULES)
def test_rule_fires_exactly_on_the_refused_schedules(write, argv, refused):
    found = "AW709" in codes(write("accelerate.yaml", YAML), select=("AW7",), training_args=parse_argv(argv))
    assert found == refused


@pytest.mark.parametrize("argv,refused", SCHEDULES)
def test_training_arguments_refuse_what_the_rule_reports(argv, refused, tmp_path):
    """The real TrainingArguments of transformers 5, built from the same command line."""
    pytest.importorskip("transformers")
    from transformers import HfArgumentParser, TrainingArguments

    parser = HfArgumentParser(TrainingArguments)
    command = [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"]
    ours = parse_argv(argv)
    if refused:
        with pytest.raises(ValueError, match="load_best_model_at_end requires"):
            parser.parse_args_into_dataclasses(command)
        assert best_model_schedule_problem(ours) is not None
    else:
        (real,) = parser.parse_args_into_dataclasses(command)
        assert best_model_schedule_problem(ours) is None
        assert effective_eval_steps(ours) == real.eval_steps


def test_an_arguments_file_is_read_the_same(write):
    recipe = write("recipe.yaml", "load_best_model_at_end: true\neval_strategy: epoch\nsave_strategy: steps\n"
                                  "eval_steps: null\n")
    args = parse_file(recipe)
    assert not args.problems  # eval_steps is Optional: null is a value
    assert "AW709" in codes(write("accelerate.yaml", YAML), select=("AW7",), training_args=args)


def test_an_invalid_value_is_left_to_aw701(write):
    args = parse_argv(["--load_best_model_at_end", "--save_steps", "many"])
    found = codes(write("accelerate.yaml", YAML), select=("AW7",), training_args=args)
    assert "AW701" in found and "AW709" not in found
