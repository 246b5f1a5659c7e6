"""The domain's words are defined once, in accelwiz/vocab.py.

Where a copy is still spelled out in a module that others own right now (the estimator, the wizard's answer
enums, the resolution's workload), this test keeps it equal to the one in vocab.py, so the copies cannot drift
while they wait to be replaced by an import.
"""

from __future__ import annotations

from typing import get_args

from accelwiz import vocab


def test_the_training_kinds_are_one_list():
    from accelwiz.estimate import posttraining as estimate_posttraining
    from accelwiz.plan_file import Kind
    from accelwiz.resolution.posttraining import KINDS as RESOLVED
    from accelwiz.trainer.options import KINDS as TRAINER
    from accelwiz.wizard.answers import TrainingKind

    assert RESOLVED is vocab.TRAINING_KINDS and TRAINER is vocab.TRAINING_KINDS
    assert get_args(Kind) == vocab.TRAINING_KINDS
    assert tuple(estimate_posttraining.KINDS) == vocab.TRAINING_KINDS
    assert get_args(estimate_posttraining.Kind) == vocab.TRAINING_KINDS
    assert tuple(k.value for k in TrainingKind) == vocab.TRAINING_KINDS
    assert tuple(k.value for k in TrainingKind if k.post) == vocab.TRL_KINDS


def test_the_precision_tables_are_inverse_and_cover_both_vocabularies():
    from accelwiz.config.accelerate import AccelerateConfig
    from accelwiz.plan_file import Precision
    from accelwiz.resolution import workload

    assert {vocab.MIXED_PRECISION_OF_PLAN[p] for p in vocab.PLAN_PRECISION_OF_MIXED.values()} == set(
        vocab.PLAN_PRECISION_OF_MIXED)
    assert set(vocab.MIXED_PRECISION_OF_PLAN) == set(get_args(Precision))
    # every mixed_precision accelerate's YAML takes has a plan spelling
    written = AccelerateConfig.model_fields["mixed_precision"].annotation
    assert set(vocab.PLAN_PRECISION_OF_MIXED) == _literals(written)
    assert workload._PRECISION == vocab.PLAN_PRECISION_OF_MIXED  # the copy the resolution still spells out


def test_the_old_method_word_is_renamed_everywhere_the_same_way():
    from accelwiz.resolution.plan import WORKLOAD_FLAG_FIELDS
    from accelwiz.rules import unit_workload

    assert unit_workload._FLAG_NAMES is vocab.RENAMED_WORKLOAD_FIELDS
    # check still passes --lora/--qlora as the old word, and the plan field it replaces is the new one
    for old, new in vocab.RENAMED_WORKLOAD_FIELDS.items():
        assert WORKLOAD_FLAG_FIELDS[old][1].endswith("." + new)


def _literals(annotation) -> set[str]:
    found = set()
    for arg in get_args(annotation) or (annotation,):
        found |= _literals(arg) if get_args(arg) else ({arg} if isinstance(arg, str) else set())
    return found


def test_the_strategy_kinds_are_one_list_the_wizard_and_the_estimator_speak():
    from accelwiz.estimate import strategy as estimate_strategy
    from accelwiz.wizard.answers import StrategyChoice

    assert tuple(s.value for s in StrategyChoice) == vocab.STRATEGY_KINDS
    assert estimate_strategy.Kind is vocab.StrategyKind  # the estimator's Strategy.kind is typed by vocab.py
    # every candidate the estimator costs is an answer the wizard takes, under the same name
    for gpus, nodes in ((1, 1), (8, 1), (8, 2)):
        for candidate in estimate_strategy.candidate_strategies(gpus, nodes):
            assert StrategyChoice(candidate.kind).value == candidate.kind
    # the old words name kinds that exist, and `estimate --strategy` reads them the same way
    for old, new in vocab.RENAMED_STRATEGIES.items():
        assert new in vocab.STRATEGY_KINDS and old not in vocab.STRATEGY_KINDS
        assert estimate_strategy.strategy_from_options(old, gpus_per_node=8, nodes=2).kind == new


def test_the_launcher_kinds_are_one_list_the_wizard_and_the_plan_speak():
    from accelwiz.plan_file import PlanLauncher
    from accelwiz.wizard.answers import Launcher

    assert get_args(PlanLauncher.model_fields["kind"].annotation) == vocab.LAUNCHER_KINDS
    assert {launcher.value for launcher in Launcher} == set(vocab.LAUNCHER_KINDS) - {"local"}
    for old, new in vocab.RENAMED_LAUNCHERS.items():
        assert new in vocab.LAUNCHER_KINDS and old not in vocab.LAUNCHER_KINDS
