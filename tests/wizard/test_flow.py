"""The loop and the parsers: preset answers are parsed like typed ones, and bad ones are usage errors."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.wizard.answer_parsing import parse_answer
from accelwiz.wizard.answers import Precision, StrategyChoice
from accelwiz.wizard.catalog import CATALOG, question
from accelwiz.wizard.flow import ask, walk
from accelwiz.wizard.prompters import DefaultsPrompter, ScriptedPrompter
from tests.wizard.scenarios import system


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("micro_batch", "8", 8),
        ("micro_batch", 8.0, 8),
        ("torch_compile", "yes", True),
        ("torch_compile", False, False),
        ("gradient_clipping", "0", 0.0),
        ("strategy", "ZERO3", StrategyChoice.zero3),
        ("precision", "bf16", Precision.bf16),
    ],
)
def test_answers_are_parsed_by_kind(key, raw, expected):
    q = question(key)
    choices = q.resolve_choices({"gpus": 8}, system("8xH100-80GB"))
    assert parse_answer(q, raw, choices) == expected


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        ("micro_batch", "two"),
        ("micro_batch", 1.5),
        ("torch_compile", "maybe"),
        ("gradient_clipping", True),
        ("strategy", "zero4"),
    ],
)
def test_bad_answers_are_usage_errors_naming_the_key(key, raw):
    q = question(key)
    with pytest.raises(UsageError, match=key):
        parse_answer(q, raw, q.resolve_choices({"gpus": 8}, system("8xH100-80GB")))


def test_a_strategy_not_offered_for_one_gpu_is_refused():
    with pytest.raises(UsageError, match="not one of the choices"):
        ask(CATALOG, system("1xT4"), DefaultsPrompter(), {"strategy": "ddp"})


def test_preset_answers_are_not_asked_again():
    prompter = ScriptedPrompter(
        {
            "model": "",
            "owner": "accelerate",
            "micro_batch": 1,
            "use_global_batch": False,
            "gradient_accumulation": 1,
            "gradient_clipping": 1,
            "torch_compile": False,
            "num_machines": 1,
            "precision": "fp16",
        }
    )
    answers = walk(CATALOG, system("1xT4"), prompter, {"gpus": 1, "strategy": "single"}).answers
    assert "gpus" not in prompter.asked and "strategy" not in prompter.asked
    assert answers["strategy"] is StrategyChoice.single


def test_defaults_prompter_refuses_a_question_without_a_default():
    with pytest.raises(UsageError, match="main_process_ip"):
        ask(CATALOG, system("2x8xH100"), DefaultsPrompter(), {"launcher": "node-commands"})


def test_validation_names_the_inconsistency():
    with pytest.raises(UsageError, match="machine_rank 2 is out of range: 0 to 1"):
        ask(
            CATALOG,
            system("2x8xH100"),
            DefaultsPrompter(),
            {"launcher": "node-commands", "main_process_ip": "10.0.0.1", "machine_rank": 2},
        )
