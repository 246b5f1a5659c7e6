"""The root of the CLI: verbosity flags, and the last boundary that turns a bug into one line."""

from __future__ import annotations

import sys

import pytest

from accelwiz.cli import main

CLEAN = "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\n"


def test_quiet_hides_the_summary_but_not_the_findings(cli, write):
    path = str(write("a.yaml", "distributed_type: NO\nnum_processes: 1\n"))
    loud, quiet = cli("check", path), cli("-q", "check", path)
    assert "1 warning." in loud.stderr and "1 warning." not in quiet.stderr
    assert "AW007" in quiet.stdout and quiet.stdout == loud.stdout


def _crash(*args, **kwargs):
    raise RuntimeError("boom")


def test_a_bug_is_one_line_with_a_hint_not_a_traceback(write, monkeypatch, capsys):
    monkeypatch.setattr("accelwiz.rules.engine.check_unit", _crash)  # the one way into the engine
    monkeypatch.setattr(sys, "argv", ["accelwiz", "check", str(write("a.yaml", CLEAN))])
    monkeypatch.delenv("ACCELWIZ_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: internal error (a bug in accelwiz") and "RuntimeError: boom" in err
    assert "ACCELWIZ_DEBUG=1" in err and "Traceback" not in err


def test_debug_shows_the_traceback(write, monkeypatch):
    monkeypatch.setattr("accelwiz.rules.engine.check_unit", _crash)  # the one way into the engine
    monkeypatch.setattr(sys, "argv", ["accelwiz", "check", str(write("a.yaml", CLEAN))])
    monkeypatch.setenv("ACCELWIZ_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main()
