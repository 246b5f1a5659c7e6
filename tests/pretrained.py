"""The session's one small pretrained checkpoint (the `checkpoint` fixture, a plugin of tests/conftest.py, shared by
tests/trainer and tests/posttraining): the one `accelwiz example` makes (accelwiz/samples.py), laid out as a
downloaded one is, so loading it is exactly the `from_pretrained` path of a real checkpoint."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from accelwiz.samples import build_checkpoint


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory) -> Path:
    """Read-only for every test. Under pytest-xdist (CI runs `-n 2`) each worker is a session of its own: the first
    worker to ask builds the one checkpoint in the run's shared temporary folder, under a lock, and the others wait
    and read that one (pytest-xdist's recipe: getbasetemp().parent is the folder all workers' temp folders share)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return build_checkpoint(tmp_path_factory.mktemp("checkpoint") / "llama-tiny")
    shared = tmp_path_factory.getbasetemp().parent / "checkpoint"
    shared.mkdir(exist_ok=True)
    ready = shared / "ready"
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the build raises
        if not ready.is_dir():
            building = shared / f"building-{worker}"
            shutil.rmtree(building, ignore_errors=True)
            build_checkpoint(building / "llama-tiny")
            building.rename(ready)  # whole or absent: a failed build leaves nothing another worker would read
    return ready / "llama-tiny"
