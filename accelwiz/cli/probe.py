"""`accelwiz probe`. PLACEHOLDER: replaced by the probe work."""

from __future__ import annotations

import typer

from accelwiz.cli.common import get_console
from accelwiz.errors import EXIT_USAGE

EPILOG = ""


def probe() -> None:
    """Not built yet."""
    get_console().error("`accelwiz probe` is not built yet")
    raise typer.Exit(EXIT_USAGE)
