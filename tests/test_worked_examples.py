"""The worked examples of docs/posttraining.md, run from the page's own text as a new user would paste them.

Every `$ ` line of the section's console blocks runs in order, in one folder (a `cd` in a line moves the next ones),
through bash, with the installed `accelwiz`. Each must exit 0, and each output line the page quotes (other than
`...`) must appear in what the command printed, its decimals free (the figures are the page's run, and a run on
another CPU may differ in the last digits of a loss) and ` ... ` inside a line standing for what it leaves out.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

pytestmark = pytest.mark.skipif(shutil.which("accelwiz") is None, reason="the accelwiz script is not installed")


@dataclass
class Command:
    line: str
    quoted: list[str] = field(default_factory=list)  # the output lines the page shows under it


def section(page: Path, title: str) -> str:
    text = page.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start: end if end != -1 else len(text)]


def commands(text: str) -> list[Command]:
    """The `$ ` lines of every console block, in order, each with the output lines quoted under it."""
    found: list[Command] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append(Command(line[2:]))
            elif found and line.strip() and line.strip() != "...":
                found[-1].quoted.append(line)
    return found


def loose(line: str) -> re.Pattern[str]:
    """A quoted line as a pattern: its decimals (losses, rewards) match any number, and ` ... ` inside it stands
    for what the page leaves out."""
    def exact(text: str) -> str:
        return r"-?[\d.e+-]+".join(re.escape(p) for p in re.split(r"\d+\.\d+", text))

    return re.compile(".*".join(exact(part) for part in line.split(" ... ")))


def run_in_order(found: list[Command], folder: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    for command in found:
        result = subprocess.run(["bash", "-c", command.line], cwd=folder, env=env, capture_output=True, text=True,
                                timeout=600)
        printed = result.stdout + result.stderr
        assert result.returncode == 0, f"`{command.line}` exited {result.returncode}:\n{printed[-3000:]}"
        for quoted in command.quoted:
            assert loose(quoted).search(printed), f"`{command.line}` did not print `{quoted}`:\n{printed[-3000:]}"
        moved = re.search(r"(?:^|&&)\s*cd\s+(\S+)\s*$", command.line)
        if moved:
            folder = folder / shlex.split(moved.group(1))[0]


def test_the_page_has_its_examples():
    found = commands(section(DOCS / "posttraining.md", "Worked examples"))
    lines = [c.line for c in found]
    assert lines[0] == "accelwiz example demo && cd demo"
    assert any("--kind dpo" in line for line in lines) and any("--kind grpo" in line for line in lines)
    assert loose("done: dpo step 4/4, loss 0.693 -> 0.189").search("done: dpo step 4/4, loss 0.693 -> 0.2")


def test_posttraining_worked_examples_run_as_written(tmp_path):
    run_in_order(commands(section(DOCS / "posttraining.md", "Worked examples")), tmp_path)
