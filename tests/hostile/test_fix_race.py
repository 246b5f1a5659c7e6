"""`check --fix` against an editor that ignores accelwiz's lock and saves while the fix writes (issue 32): the edit
lands while the fix's temporary file is being fsynced, the slowest step before the rename. The fix must refuse in
one line (exit 2) and leave the user's edit; it used to rename over it and report success.

The fix runs as a real process whose os.fsync is slowed (a stand-in for a slow disk): the first fsync drops a
marker file and waits for a go file (60 s at most), the test saves the file meanwhile, as an editor would (in place,
or by rename), then drops the go file: the edit always lands inside the fsync, however loaded the machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXABLE = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n"  # AW008: quote the 'no'
EDITED = FIXABLE + "debug: true\n"
# The slowed fsync: the first call (the fix's temporary file) says so through a marker file, then waits for go.
SLOW_FSYNC = """
import os, runpy, sys, time
marker, go, real = sys.argv.pop(1), sys.argv.pop(1), os.fsync
def slow(fd, _done=[]):
    if not _done:
        _done.append(1)
        open(marker, "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
    real(fd)
os.fsync = slow
sys.argv[0] = "accelwiz"
runpy.run_module("accelwiz", run_name="__main__")
"""


def _save_in_place(path: Path) -> None:
    path.write_text(EDITED)


def _save_by_rename(path: Path) -> None:
    temporary = path.with_name(path.name + ".editor~")
    temporary.write_text(EDITED)
    os.replace(temporary, path)


@pytest.mark.parametrize("save", [_save_in_place, _save_by_rename], ids=["in-place", "by-rename"])
def test_an_edit_saved_during_the_fix_fsync_is_refused_and_kept(tmp_path, save):
    path = tmp_path / "accelerate.yaml"
    path.write_text(FIXABLE)
    marker = tmp_path / "fsync-started"
    go = tmp_path / "go"
    fix = subprocess.Popen([sys.executable, "-c", SLOW_FSYNC, str(marker), str(go), "check", "--fix", "--select",
                            "AW008", path.name], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and fix.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.exists(), fix.communicate(timeout=60)
    save(path)  # the editor does not take accelwiz's lock
    go.touch()
    out, err = fix.communicate(timeout=120)
    assert fix.returncode == 2, (out, err)
    assert "changed since accelwiz read it" in err and "nothing was written" in err
    assert "Traceback" not in err and len([line for line in err.splitlines() if "error" in line.lower()]) == 1
    assert path.read_text() == EDITED
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_without_an_edit_the_slowed_fix_writes(tmp_path):
    """The same slowed process with nobody editing: the fix is written (the refusal above is the edit's doing)."""
    path = tmp_path / "accelerate.yaml"
    path.write_text(FIXABLE)
    (tmp_path / "go").touch()
    fix = subprocess.run([sys.executable, "-c", SLOW_FSYNC, str(tmp_path / "marker"), str(tmp_path / "go"),
                          "check", "--fix", "--select", "AW008", path.name], cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert fix.returncode == 0, fix.stderr
    assert path.read_text() == FIXABLE.replace("mixed_precision: no", "mixed_precision: 'no'")
