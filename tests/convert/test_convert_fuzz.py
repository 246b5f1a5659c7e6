"""Mutated corpus configs through `accelwiz convert`: whatever the mutation, the command converts (exit 0, or 1
when the result still has findings) or refuses in one line (exit 2, nothing written); never an internal error."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from accelwiz.document import load_document
from tests.conftest import corpus_dir

CORPUS = corpus_dir()


def _sources() -> list[tuple[Path, str]]:
    """Corpus YAMLs convert reads on its own (FSDP, or DeepSpeed with the inline config), with their target."""
    found = []
    for path in sorted((CORPUS / "real").glob("*.yaml")) if CORPUS is not None else []:
        try:
            document = load_document(path)
        except Exception:  # unreadable corpus files are other tests' business
            continue
        kind = document.get("distributed_type")
        if kind == "FSDP":
            found.append((path, "deepspeed"))
        elif kind == "DEEPSPEED" and not document.get("deepspeed_config", "deepspeed_config_file"):
            found.append((path, "fsdp"))
    return found


SOURCES = _sources()
pytestmark = pytest.mark.skipif(not SOURCES, reason="corpus not found")
ODD_VALUES = st.sampled_from([None, "", "auto", "8", "yes", "NO", -1, 0, 3, 2**40, 1.5, True, False, [], [1, "a"],
                              {}, "FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "cpu", "nvme", "fp8"])
SECTIONS = ("fsdp_config", "deepspeed_config")


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    path, target = draw(st.sampled_from(SOURCES))
    data = yaml.safe_load(path.read_text())
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from([None, *[s for s in SECTIONS if isinstance(data.get(s), dict)]]))
        parent = data if section is None else data[section]
        if not parent:
            continue
        key = draw(st.sampled_from(sorted(parent, key=str)))
        action = draw(st.sampled_from(["drop", "retype", "retype", "replace section"]))
        if action == "drop" and key != "distributed_type":
            del parent[key]
        elif action == "replace section" and section is not None:
            data[section] = copy.deepcopy(draw(ODD_VALUES))
        elif key != "distributed_type":
            parent[key] = copy.deepcopy(draw(ODD_VALUES))
    return path.name, data, target


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_convert_never_crashes_and_never_half_writes(case):
    from accelwiz.cli import app

    name, data, target = case
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_text(yaml.safe_dump(data, sort_keys=False))
        result = CliRunner().invoke(app, ["convert", str(source), "--to", target, "-o", str(Path(folder) / "out.yaml")],
                                    catch_exceptions=False)
        assert "internal error" not in result.stderr, result.stderr
        assert result.exit_code in (0, 1, 2), result.stderr
        written = sorted(p.name for p in Path(folder).iterdir())
        if result.exit_code == 2:
            assert written == [name], result.stderr
            assert result.stderr.startswith("error:"), result.stderr
        else:
            assert "out.yaml" in written and load_document(Path(folder) / "out.yaml").kind == "accelerate"


def _zero_jsons() -> list[Path]:
    found = []
    for path in sorted((CORPUS / "real").glob("*.json")) if CORPUS is not None else []:
        try:
            if load_document(path).kind == "deepspeed":
                found.append(path)
        except Exception:  # unreadable corpus files are other tests' business
            continue
    return found


JSONS = _zero_jsons()


def _keys(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            found += [(*prefix, key), *_keys(value, (*prefix, key))]
    return found


@st.composite
def mutated_json(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    import json

    path = draw(st.sampled_from(JSONS))
    data = json.loads(path.read_text()) if path.read_text().lstrip().startswith("{") else {}
    for _ in range(draw(st.integers(1, 3))):
        keys = _keys(data)
        if not keys:
            break
        target = draw(st.sampled_from(keys))
        parent = data
        for step in target[:-1]:
            parent = parent[step]
        if draw(st.booleans()):
            del parent[target[-1]]
        else:
            parent[target[-1]] = copy.deepcopy(draw(ODD_VALUES))
    return path.name, data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_json())
def test_convert_of_a_yaml_with_a_mutated_json_never_crashes(case):
    import json

    from accelwiz.cli import app

    name, data = case
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "ds.json").write_text(json.dumps(data))
        source = Path(folder) / "ds.yaml"
        source.write_text(f"distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n"
                          f"  deepspeed_config_file: {Path(folder) / 'ds.json'}\n")
        result = CliRunner().invoke(app, ["convert", str(source), "--to", "fsdp", "-o", str(Path(folder) / "out.yaml")],
                                    catch_exceptions=False)
        assert "internal error" not in result.stderr, (name, result.stderr)
        assert result.exit_code in (0, 1, 2), result.stderr
        written = sorted(p.name for p in Path(folder).iterdir())
        assert written == (["ds.json", "ds.yaml"] if result.exit_code == 2 else ["ds.json", "ds.yaml", "out.yaml"])
