"""`accelwiz init`. PLACEHOLDER: replaced by the init work."""

from __future__ import annotations

import typer

from accelwiz.cli.common import get_console
from accelwiz.errors import EXIT_USAGE

EPILOG = ""


def init() -> None:
    """Not built yet."""
    get_console().error("`accelwiz init` is not built yet")
    raise typer.Exit(EXIT_USAGE)
