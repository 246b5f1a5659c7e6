"""The checked-in JSON Schemas are generated from the config models and must not go stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from accelwiz.config.json_schema import SCHEMA_FILES, render_schemas

REPO = Path(__file__).resolve().parent.parent


def test_checked_in_schemas_are_current(cli):
    result = cli("schema", "--check", str(REPO / "schemas"))
    assert result.exit_code == 0, "run `accelwiz schema --write schemas`"


def test_rendered_schemas_match_files():
    for name, text in render_schemas().items():
        assert (REPO / "schemas" / name).read_text() == text
    assert set(SCHEMA_FILES.values()) == {p.name for p in (REPO / "schemas").glob("*.json")}


def test_schema_command_prints_one_schema(cli):
    schema = json.loads(cli("schema", "--which", "deepspeed").stdout)
    assert schema["title"].startswith("DeepSpeed")
    assert "zero_optimization" in schema["properties"]


@pytest.mark.parametrize("template", sorted((REPO / "templates").glob("*.*")), ids=lambda p: p.name)
def test_templates_validate_against_the_schemas_as_an_editor_would(template):
    jsonschema = pytest.importorskip("jsonschema")
    which = "deepspeed" if template.suffix == ".json" else "plan" if template.name.endswith(".plan.yaml") else "accelerate"
    schema = json.loads((REPO / "schemas" / SCHEMA_FILES[which]).read_text())
    data = json.loads(template.read_text()) if which == "deepspeed" else yaml.safe_load(template.read_text())
    jsonschema.validate(data, schema)
