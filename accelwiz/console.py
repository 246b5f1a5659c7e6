"""All user-facing output: talk goes to stderr, data (reports, YAML, JSON) to stdout."""

from __future__ import annotations

import os
import sys
from functools import cached_property
from typing import TextIO


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

    def error(self, text: str, *, hint: str | None = None) -> None:
        print(f"{self._style('error', '1;31')}: {text}", file=self._stderr)
        if hint:
            print(f"  {self._style('hint', '1;36')}: {hint}", file=self._stderr)

    def warn(self, text: str) -> None:
        if self.verbosity > -2:
            print(f"{self._style('warning', '1;33')}: {text}", file=self._stderr)

    def info(self, text: str) -> None:
        if self.verbosity > -1:
            print(text, file=self._stderr)

    def debug(self, text: str) -> None:
        if self.verbosity > 0:
            print(self._style(text, "2"), file=self._stderr)

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
