"""The commands README.md and docs/*.md show, read from the pages' own text, and how a reader's run of them is
judged (tests/test_docs_commands.py runs every page; tests/test_worked_examples.py checks one section's shape).

A command is a `$ ` line of a ```console block or of a plain ``` block (a trailing `\\` joins the next line, as
the shell does), every line of a ```bash/```sh block that is not a comment, or an `accelwiz ...` line of a console
block that has no `$ ` line (docs/rules.md's examples). The output lines a page quotes under a `$ ` line (other than
`...`) must appear in what the command printed, its measurements free (MEASURED: the page's run; another CPU
differs in the last digits of a loss or in tokens/s) and ` ... ` inside a line standing for what it leaves out. A command exits 0 unless its line
says otherwise in a trailing comment (`# exit 1`), as a reader sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
SHELL = {"bash", "sh", "shell"}
EXIT = re.compile(r"#[^'\"]*\bexit (\d+)\b[^'\"]*$")


@dataclass
class Command:
    line: str
    page: str = ""
    number: int = 0  # the page's line number, for messages
    quoted: list[str] = field(default_factory=list)  # the output lines the page shows under it

    @property
    def exit_code(self) -> int:
        said = EXIT.search(self.line)
        return int(said.group(1)) if said else 0


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def section(page: Path, title: str) -> str:
    text = page.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start: end if end != -1 else len(text)]


def commands(text: str, page: str = "") -> list[Command]:
    """Every documented command of `text`, in order, each with the output lines quoted under it."""
    found: list[Command] = []
    for block in BLOCK.finditer(text):
        language, body = block.group(1), block.group(2)
        first = text.count("\n", 0, block.start()) + 2
        if language and language not in SHELL and language != "console":
            continue
        lines = body.splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        joining = False
        for offset, line in enumerate(lines):
            if joining:
                found[-1].line = found[-1].line[:-1].rstrip() + " " + line.strip()
            elif line.startswith("$ ") or (language in SHELL and line.strip() and not line.startswith("#")) or \
                    (language == "console" and not prompted and line.startswith("accelwiz ")):
                found.append(Command(line[2:] if line.startswith("$ ") else line, page, first + offset))
            elif found and found[-1].number >= first and prompted and line.strip() and line.strip() != "...":
                found[-1].quoted.append(line)
            joining = bool(found) and found[-1].number >= first and line.endswith("\\")
    return found


# What a run measures, which another machine prints otherwise: decimals (losses, rewards, GiB), counts grouped
# by thousands (tokens/s, parameters) and sizes in KiB/MiB/GiB (a peak RSS)
MEASURED = r"\d+\.\d+|\d{1,3}(?:,\d{3})+|\d+(?= [KMG]iB)"


def loose(line: str) -> re.Pattern[str]:
    """A quoted line as a pattern: what it measures (MEASURED) matches any number, and ` ... ` inside it stands
    for what the page leaves out."""
    def exact(text: str) -> str:
        return r"-?[\d.,e+-]+".join(re.escape(p) for p in re.split(MEASURED, text))

    return re.compile(".*".join(exact(part) for part in re.split(r" \.\.\.(?: |$)", line)))
