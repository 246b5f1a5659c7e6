"""Every branch of the catalog, walked by a scripted answer set, ends in configs that `check` accepts."""

from __future__ import annotations

import inspect

import pytest

from accelwiz.wizard import predicates
from accelwiz.wizard.catalog import CATALOG
from accelwiz.wizard.write import errors_of
from tests.wizard.scenarios import SCENARIOS, run_scenario

PREDICATES = {
    name: fn
    for name, fn in inspect.getmembers(predicates, inspect.isfunction)
    if fn.__module__ == predicates.__name__ and name != "always"
}


@pytest.fixture(scope="module")
def outcomes():
    return {scenario.name: run_scenario(scenario) for scenario in SCENARIOS}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_asks_exactly_what_applies_and_passes_check(scenario, outcomes):
    outcome = outcomes[scenario.name]
    # Every scripted answer was asked for and nothing else was: inapplicable questions are never asked.
    assert sorted(outcome.asked) == sorted(scenario.script)
    assert errors_of(outcome.generated.diagnostics) == []


def test_every_predicate_is_walked_both_ways(outcomes):
    seen: dict[str, set[bool]] = {name: set() for name in PREDICATES}
    for outcome in outcomes.values():
        for question, applied in outcome.walk.decisions:
            seen[question.when.__name__].add(applied) if question.when.__name__ in seen else None
    assert {name: results for name, results in seen.items() if results != {True, False}} == {}


def test_catalog_uses_only_named_predicates_and_unique_keys():
    assert len({q.key for q in CATALOG}) == len(CATALOG)
    for question in CATALOG:
        assert question.when is predicates.always or question.when in PREDICATES.values(), question.key
        assert question.help and "\n" not in question.help, question.key


def test_every_predicate_is_used_by_the_catalog():
    used = {q.when.__name__ for q in CATALOG}
    assert set(PREDICATES) <= used
