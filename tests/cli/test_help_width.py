"""`COLUMNS=80 accelwiz CMD --help` reads on an 80-column terminal: no line wider than 80, and every option of the
command printed whole (click cuts nothing itself, but an epilog's examples are printed as written and can run past
the edge, and an option table that rich renders cuts names: `--print-node-comman…`). Before the epilogs were
wrapped, check, estimate, doctor and example had 5, 8, 8 and 1 lines over 80."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import typer

from accelwiz.cli import COMMANDS, build_app

WIDTH = 80


def help_text(*argv: str) -> str:
    env = {**os.environ, "COLUMNS": str(WIDTH), "NO_COLOR": "1"}
    result = subprocess.run(["accelwiz", *argv, "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def options_of(name: str) -> list[str]:
    command = typer.main.get_command(build_app([name])).commands[name]  # typer vendors click: no isinstance
    return [opt for param in command.params if param.param_type_name == "option" and not param.hidden
            for opt in param.opts + param.secondary_opts]


pytestmark = pytest.mark.skipif(shutil.which("accelwiz") is None, reason="the accelwiz script is not installed")


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_fits_80_columns_with_every_option_whole(name):
    argv = (name,) if name else ()
    text = help_text(*argv)
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, f"`accelwiz {name or ''} --help` at {WIDTH} columns has lines of " \
                     f"{[len(line) for line in wide]} columns:\n" + "\n".join(wide)
    assert "…" not in text
    if name:
        words = set(text.replace(",", " ").replace("/", " ").split())
        missing = [opt for opt in options_of(name) if opt not in words]
        assert not missing, f"`accelwiz {name} --help` does not show {missing} whole"
