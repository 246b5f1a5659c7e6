"""An alias names exactly one model, or is refused with the candidates (issue 28, "Bad input"): `qwen-7b` was
silently Qwen2.5-7B, while Qwen-7B, Qwen1.5-7B and Qwen2-7B are other models (Qwen-7B: another vocabulary and MLP)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.errors import UsageError
from accelwiz.modelspec.lookup import named_model, resolve_model
from accelwiz.modelspec.preset_names import AMBIGUOUS_ALIASES
from accelwiz.modelspec.presets import PRESETS


@pytest.mark.parametrize("alias", sorted(AMBIGUOUS_ALIASES))
def test_an_ambiguous_alias_is_refused_with_every_candidate(alias: str) -> None:
    with pytest.raises(UsageError) as refused:
        resolve_model(alias.upper())  # names are matched without case, as every other name
    for candidate in AMBIGUOUS_ALIASES[alias]:
        assert candidate in str(refused.value)


def test_no_preset_answers_to_an_ambiguous_alias() -> None:
    for spec in PRESETS:
        assert not {a.lower() for a in spec.aliases} & set(AMBIGUOUS_ALIASES), spec.name


def test_every_candidate_that_is_a_preset_resolves_on_its_own() -> None:
    presets = [c for names in AMBIGUOUS_ALIASES.values() for c in names if "/" not in c]
    assert presets and all(named_model(c) is not None for c in presets)


def test_estimate_refuses_it_in_one_line() -> None:
    result = CliRunner().invoke(app, ["estimate", "--model", "qwen-7b", "--system", "1xA100-80GB"])
    assert result.exit_code == 2
    assert "qwen-7b" in result.output and "Qwen/Qwen-7B" in result.output and "Traceback" not in result.output
