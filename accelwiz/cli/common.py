"""What every command shares: the console, the error boundary, and option declarations written once."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from enum import Enum
from typing import Annotated

import typer

from accelwiz.console import Console
from accelwiz.errors import EXIT_INTERRUPTED, AccelwizError

_verbosity: int | None = None  # set once by the root callback from -v/-q


def set_verbosity(verbosity: int) -> None:
    global _verbosity
    _verbosity = verbosity


def get_console() -> Console:
    """The console for this invocation: -v/-q on the command line, else ACCELWIZ_VERBOSITY, else 0."""
    if _verbosity is not None:
        return Console(verbosity=_verbosity)
    try:
        return Console(verbosity=int(os.environ.get("ACCELWIZ_VERBOSITY", "0")))
    except ValueError:
        return Console()


@contextlib.contextmanager
def exit_on_error(console: Console) -> Iterator[None]:
    """The one place where expected exceptions become a message, a hint and an exit code."""
    try:
        yield
    except AccelwizError as exc:
        console.error(exc.message, hint=exc.hint)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        console.error("interrupted; nothing was written")
        raise typer.Exit(EXIT_INTERRUPTED) from None


def split_codes(values: list[str] | None) -> list[str]:
    """`--select AW1,AW2 --select AW3` -> ["AW1", "AW2", "AW3"]."""
    return [part.strip().upper() for value in values or [] for part in value.split(",") if part.strip()]


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


SystemOption = Annotated[str | None, typer.Option(
    "--system", metavar="FILE|PRESET|local",
    help="Plan for a machine: a profile from `accelwiz probe --save`, a preset (`accelwiz probe --list-presets`), "
         "or `local` for this machine.")]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
