"""Shared fixtures: the corpus in ../shared (skipped cleanly when absent), and a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
# the pin_local fixture beside the machine() profile builder; the session's tiny pretrained checkpoint; under
# pytest-xdist, the tests sharing a module-scoped fixture on one worker
pytest_plugins = ["tests.profiles", "tests.pretrained", "tests.worker_groups"]


def corpus_dir() -> Path | None:
    configured = os.environ.get("ACCELWIZ_CORPUS")
    candidates = [Path(configured)] if configured else []
    candidates.append(REPO.parent / "shared" / "corpus")
    return next((c for c in candidates if (c / "index.tsv").is_file()), None)


def corpus_accelerate_yamls(corpus: Path | None, folders: tuple[str, ...] = ("real",)) -> list[tuple[Path, Any]]:
    """(path, document) of each readable Accelerate YAML in the corpus folders; none without a corpus.
    Unreadable files are skipped: reporting them is the loader tests' business."""
    from accelwiz.document import load_document

    found = []
    for folder in folders if corpus is not None else ():
        for path in sorted((corpus / folder).iterdir()):
            if path.suffix not in (".yaml", ".yml"):
                continue
            try:
                document = load_document(path)
            except Exception:  # noqa: BLE001 - see the docstring
                continue
            if document.kind == "accelerate":
                found.append((path, document))
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    """A DeepSpeed op build killed mid-way (a test run interrupted in its first minutes) leaves torch's build lock,
    and every later DeepSpeed test then waits for it without end; remove such leftovers before anything builds
    (the same clean-up `accelwiz run` does before a launch: accelwiz/launch/build_locks.py)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller did it, before any worker started
    from accelwiz.launch.build_locks import clear_stale_build_locks, extensions_folder
    from accelwiz.launch.environment import torch_build, torch_extensions_cache

    for folder in (extensions_folder(os.environ), torch_extensions_cache(os.environ, torch_build())):
        clear_stale_build_locks(folder)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (CI runs `-n 2`), the tests marked slow (real launches, 5-45 s each) are handed out
    first and the many sub-second ones after them: they fill the end of the run evenly on both workers instead of
    one worker finishing a 40 s training alone. Without xdist the order is the files' order, untouched."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: file order within each


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path_factory, monkeypatch) -> None:
    """Every test starts in an empty folder of its own: none reads what the caller's working directory holds
    (the README's `accelwiz init && accelwiz run` leaves an accelerate.yaml and a plan there)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _no_allocator_settings(monkeypatch) -> None:
    """No test reads the developer's PYTORCH_CUDA_ALLOC_CONF (an estimate's default allocator follows it)."""
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.delenv("PYTORCH_ALLOC_CONF", raising=False)


@pytest.fixture(scope="session")
def corpus() -> Path:
    found = corpus_dir()
    if found is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS or put shared/corpus beside the repository")
    return found


@pytest.fixture()
def cli():
    """Invoke the CLI in-process; returns typer's Result with separate stdout and stderr."""
    from accelwiz.cli import app

    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture()
def write(tmp_path: Path):
    """Write a config file into tmp_path and return its path: write("a.yaml", "distributed_type: 'NO'")."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return _write
