"""Where the shipped data lives: `accelwiz.schemas` and `accelwiz.templates` map to the repository's
top-level schemas/ and templates/ folders (see pyproject.toml), both in a checkout and in a wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    # Running from a checkout that was never installed: fall back to the repository layout.
    return Path(__file__).resolve().parent.parent / package.rsplit(".", 1)[-1]


def schemas_dir() -> Path:
    return package_dir("accelwiz.schemas")


def templates_dir() -> Path:
    return package_dir("accelwiz.templates")
