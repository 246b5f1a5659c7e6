"""tests/worker_groups.py on a real pytest-xdist run of two workers: a module-scoped fixture is set up once for the
run, its tests on one worker, while the tests sharing nothing still spread over both."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SHARED = '''import os, time
import pytest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    marker = tmp_path_factory.getbasetemp().parent.parent / f"built-{os.environ['PYTEST_XDIST_WORKER']}-{os.getpid()}"
    marker.write_text("")
    return marker


@pytest.mark.parametrize("n", range(6))
def test_reads_the_module_fixture(built, n):
    time.sleep(0.2)  # long enough that a free worker would take some of these if they were handed out one by one
    assert built.exists()
'''
LOOSE = '''import os, time
import pytest


@pytest.mark.parametrize("n", range(12))
def test_shares_nothing(n, tmp_path_factory):
    time.sleep(0.2)
    (tmp_path_factory.getbasetemp().parent.parent / f"loose-{os.environ['PYTEST_XDIST_WORKER']}").write_text("")
'''


def test_a_module_fixture_is_built_once_per_run_and_unshared_tests_spread(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_shared.py").write_text(SHARED)
    (project / "test_loose.py").write_text(LOOSE)
    base = tmp_path / "runs" / "base"
    base.parent.mkdir()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p",
                          "tests.worker_groups", "-p", "no:cacheprovider", f"--basetemp={base}", "-c", os.devnull,
                          "--rootdir", str(project), str(project)],
                         cwd=project, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    made = sorted(p.name.split("-")[0] for p in (tmp_path / "runs").glob("*-*"))
    assert made.count("built") == 1, made
    assert made.count("loose") == 2, made  # both workers ran unshared tests
