"""All user-facing output: talk goes to stderr, data (reports, YAML, JSON) to stdout."""

from __future__ import annotations

import os
import sys
import unicodedata
from functools import cached_property
from typing import TextIO

# Characters that change what a terminal shows rather than showing themselves: C0/C1 controls (ESC starts a
# colour, a cursor move or a title change), the Unicode line separators, and the bidirectional overrides that can
# make `evil` read as `live` ("Trojan Source", CVE-2021-42574).
_BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: object, *, keep: str = "") -> str:
    """`text` safe to print on a terminal: every control character written as an escape (`\\x1b`, `\\n`,
    `\\u202e`), so a value read from a file can neither style the terminal nor start a line of its own.

    The one escaping function every renderer uses for values that came from a file; `keep` names characters that
    stay (the console keeps the newlines of its own multi-line messages)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch in keep or not _hostile(ch) else _escaped(ch) for ch in text)


def _hostile(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ord(ch) in _BIDI


def _escaped(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class Console:
    """A small, dependency-light console; rich is only imported when a table is rendered."""

    def __init__(self, *, verbosity: int = 0, color: bool | None = None,
                 stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.verbosity = verbosity
        self._stdout = stdout or sys.stdout
        self._stderr = stderr or sys.stderr
        if color is None:
            if os.environ.get("NO_COLOR"):
                color = False
            elif os.environ.get("FORCE_COLOR"):
                color = True
            else:
                color = self._stderr.isatty()
        self.color = color

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    # Talk often quotes a file name or a value from a file: every line of it goes through `printable`.
    def error(self, text: str, *, hint: str | None = None) -> None:
        print(f"{self._style('error', '1;31')}: {_talk(text)}", file=self._stderr)
        if hint:
            print(f"  {self._style('hint', '1;36')}: {_talk(hint)}", file=self._stderr)

    def warn(self, text: str) -> None:
        if self.verbosity > -2:
            print(f"{self._style('warning', '1;33')}: {_talk(text)}", file=self._stderr)

    def info(self, text: str) -> None:
        if self.verbosity > -1:
            print(_talk(text), file=self._stderr)

    def debug(self, text: str) -> None:
        if self.verbosity > 0:
            print(self._style(_talk(text), "2"), file=self._stderr)

    def data(self, text: str) -> None:
        """Machine-readable or primary output: stdout, never styled unless the caller styled it."""
        self._stdout.write(text if text.endswith("\n") else text + "\n")
        self._stdout.flush()

    @cached_property
    def rich(self):  # noqa: ANN201 - rich is imported lazily on purpose
        """A rich console on stdout for tables; markup off so user text is never read as markup."""
        from rich.console import Console as RichConsole

        return RichConsole(file=self._stdout, markup=False, emoji=False, highlight=False,
                           no_color=not self._stdout.isatty() and not os.environ.get("FORCE_COLOR"))


def _talk(text: object) -> str:
    return printable(text, keep="\n\t")
