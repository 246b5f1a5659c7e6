"""`accelwiz estimate`. PLACEHOLDER: replaced by the estimate work."""

from __future__ import annotations

import typer

from accelwiz.cli.common import get_console
from accelwiz.errors import EXIT_USAGE

EPILOG = ""


def estimate() -> None:
    """Not built yet."""
    get_console().error("`accelwiz estimate` is not built yet")
    raise typer.Exit(EXIT_USAGE)
