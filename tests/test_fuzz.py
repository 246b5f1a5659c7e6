"""Mutate real corpus configs (drop, rename and retype keys at any depth) and run every rule on them:
no mutation may crash the checker; malformed values must become findings."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelwiz.document import parse_text
from accelwiz.errors import InputError
from accelwiz.rules.context import CheckContext
from accelwiz.rules.engine import run_rules
from accelwiz.rules.registry import select_rules
from tests.conftest import corpus_dir

CORPUS = corpus_dir()
FILES = sorted((CORPUS / "real").iterdir()) if CORPUS else []
pytestmark = pytest.mark.skipif(not FILES, reason="corpus not found")

ODD_VALUES = st.sampled_from([None, "", "auto", "8", "1e8", "yes", "NO", -1, 0, 2**40, 1.5, float("nan"), True,
                              [], [1, "a"], {}, {"x": {"y": None}}, "💥", "x" * 300])


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((*prefix, key))
            found += _paths(value, (*prefix, key))
    return found


@st.composite
def mutated_config(draw: st.DrawFn) -> tuple[Path, Any]:
    path = draw(st.sampled_from(FILES))
    kind = "deepspeed" if path.read_text().lstrip().startswith("{") else "accelerate"
    data = parse_text(path.read_text(), path).data
    for _ in range(draw(st.integers(1, 4))):
        keys = _paths(data)
        if not keys:
            break
        target = draw(st.sampled_from(keys))
        parent = data
        for step in target[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["drop", "rename", "retype", "nest"]))
        if action == "drop":
            del parent[target[-1]]
        elif action == "rename":
            parent[target[-1] + draw(st.sampled_from(["_", "s", " "]))] = parent.pop(target[-1])
        elif action == "retype":
            parent[target[-1]] = copy.deepcopy(draw(ODD_VALUES))
        else:
            parent[target[-1]] = {"deepspeed_config_file": "missing.json", "stage": "auto"}
    return path.with_name(f"mutated-{kind}{path.suffix}"), data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_config(), st.booleans())
def test_mutated_corpus_configs_never_crash_the_checker(case, as_json):
    path, data = case
    text = json.dumps(data, allow_nan=True) if as_json else yaml.safe_dump(data)
    try:
        document = parse_text(text, path)
    except InputError:
        return  # e.g. the mutation emptied the file: a clear error is the right answer
    ctx = CheckContext(accelerate=document) if document.kind == "accelerate" else CheckContext(deepspeed=document)
    for diagnostic in run_rules(ctx, select_rules()):
        assert diagnostic.message and diagnostic.line >= 1
