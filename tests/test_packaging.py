"""The wheel must contain every subpackage, the JSON Schemas and the templates."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "accelwiz").rglob("__init__.py")}
    assert on_disk <= listed, f"add to [tool.setuptools] packages: {sorted(on_disk - listed)}"


@pytest.mark.slow
def test_wheel_ships_schemas_and_templates(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(REPO)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("accelwiz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for schema in (REPO / "schemas").glob("*.json"):
        assert f"accelwiz/schemas/{schema.name}" in names
    for template in (REPO / "templates").iterdir():
        if template.suffix in (".yaml", ".json"):
            assert f"accelwiz/templates/{template.name}" in names
    assert "accelwiz/cli/__init__.py" in names
