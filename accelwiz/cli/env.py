"""`accelwiz env`. PLACEHOLDER: replaced by the env work."""

from __future__ import annotations

import typer

from accelwiz.cli.common import get_console
from accelwiz.errors import EXIT_USAGE

EPILOG = ""


def env() -> None:
    """Not built yet."""
    get_console().error("`accelwiz env` is not built yet")
    raise typer.Exit(EXIT_USAGE)
