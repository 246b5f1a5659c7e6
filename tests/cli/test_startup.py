"""The fast commands start without the heavy libraries, and the console script loads only the command it runs.

Each command runs as a user runs it: a fresh interpreter through the console script's `main()` (not the test
app, which builds every command). torch, accelerate, deepspeed and transformers cost seconds to import
(`accelerate env` is the yardstick in benchmarks/startup_ratio.py); these commands need none of them. Timings are
the benchmarks' job; this test only says what was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "accelerate", "deepspeed", "transformers")
COMMAND_MODULES = ("probe", "env", "check", "rule", "migrate", "convert", "estimate", "init", "run", "schema",
                   "doctor", "example")

# The program: run main() with argv, then report (whatever the exit code) which modules it imported.
_PROGRAM = """
import json, sys
sys.argv = ["accelwiz", *{argv!r}]
from accelwiz.cli import main
try:
    main()
except SystemExit:
    pass
finally:
    sys.stdout.flush()
    report = {{"heavy": [m for m in {heavy!r} if m in sys.modules],
               "commands": sorted(m.rsplit(".", 1)[1] for m in sys.modules
                                  if m.startswith("accelwiz.cli.") and m.rsplit(".", 1)[1] in {commands!r}),
               "rule_modules": sorted(m for m in sys.modules if m.startswith("accelwiz.rules.trainer_")
                                      or m.startswith("accelwiz.rules.trl_") or m == "accelwiz.rules.memory")}}
    print("REPORT=" + json.dumps(report), file=sys.stderr)
"""

FAST = {
    "probe": ["probe", "--json"],
    "check": ["check", str(REPO / "templates" / "ddp.yaml")],
    "estimate": ["estimate", "--model", "llama-8b", "--system", "8xH100-80GB"],
    "init": ["init", "--help"],
    "rule": ["rule", "AW001"],
    "schema": ["schema", "--which", "deepspeed"],
}


def _imported(argv: list[str], tmp_path: Path) -> dict[str, list[str]]:
    code = _PROGRAM.format(argv=argv, heavy=HEAVY, commands=COMMAND_MODULES)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    line = next((text for text in done.stderr.splitlines() if text.startswith("REPORT=")), None)
    assert line is not None, done.stderr[-2000:]
    return json.loads(line.removeprefix("REPORT="))


@pytest.mark.parametrize("name", sorted(FAST))
def test_a_fast_command_imports_no_heavy_library_and_no_other_command(name: str, tmp_path: Path):
    found = _imported(FAST[name], tmp_path)
    assert found["heavy"] == [], f"`accelwiz {' '.join(FAST[name])}` imported {found['heavy']}"
    # the command's own module (and the modules it imports on purpose: check's fixes live in cli/fixes.py)
    assert found["commands"] == [name], found["commands"]


def test_a_yaml_check_loads_no_trainer_trl_or_memory_rules(tmp_path: Path):
    found = _imported(FAST["check"], tmp_path)
    assert found["rule_modules"] == []


def test_help_lists_every_command(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "accelwiz", "--help"], capture_output=True, text=True, cwd=tmp_path)
    listed = {line.split()[0] for line in done.stdout.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(COMMAND_MODULES)


def test_an_unknown_command_is_refused_with_the_commands_built(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "accelwiz", "chekc", "a.yaml"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 2 and "No such command 'chekc'" in done.stderr


@pytest.mark.parametrize(("argv", "command"), [
    (["check", "a.yaml"], "check"), (["-q", "check"], "check"), (["-vv", "--quiet", "estimate"], "estimate"),
    (["--help"], None), ([], None), (["-h", "check"], None), (["chekc"], None), (["--version"], None),
])
def test_the_console_script_reads_the_command_from_argv(argv: list[str], command: str | None):
    from accelwiz.cli import invoked_command

    assert invoked_command(argv) == command
