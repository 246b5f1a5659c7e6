"""`accelwiz run`. PLACEHOLDER: replaced by the run work."""

from __future__ import annotations

import typer

from accelwiz.cli.common import get_console
from accelwiz.errors import EXIT_USAGE

EPILOG = ""


def run() -> None:
    """Not built yet."""
    get_console().error("`accelwiz run` is not built yet")
    raise typer.Exit(EXIT_USAGE)
