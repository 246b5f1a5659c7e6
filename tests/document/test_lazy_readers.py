"""accelwiz.document loads its YAML/JSON readers on first use, so `estimate` with a preset never imports PyYAML
(issue 33: start-up)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DDP = Path(__file__).resolve().parents[2] / "templates" / "ddp.yaml"
_AT_EXIT = ("import atexit, sys; atexit.register(lambda: print('yaml' in sys.modules, file=sys.stderr)); "
            "sys.argv = ['accelwiz', *sys.argv[1:]]; from accelwiz.cli import main; main()")


def _imports_yaml(*argv: str) -> bool:
    done = subprocess.run([sys.executable, "-c", _AT_EXIT, *argv], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1] == "True"


def test_the_readers_come_on_first_use() -> None:
    code = ("import sys, accelwiz.document as d; before = 'yaml' in sys.modules; d.load_document; "
            "from accelwiz.document import parse_text; print(before, 'yaml' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_estimate_with_a_preset_imports_no_yaml_and_check_does() -> None:
    assert not _imports_yaml("estimate", "--model", "llama-8b", "--system", "8xH100-80GB")
    assert _imports_yaml("check", "--format", "json", str(DDP))
