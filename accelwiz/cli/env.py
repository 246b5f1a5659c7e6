"""`accelwiz env`: a Markdown report to paste into a bug report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console

EPILOG = """\
Examples:

  $ accelwiz env                      # versions, packages, GPUs, topology
  $ accelwiz env accelerate.yaml ds_config.json  # + each config, checked
  $ accelwiz env accelerate.yaml | xclip -selection clipboard
"""


def env(
    configs: Annotated[list[Path] | None, typer.Argument(
        help="Accelerate YAML and/or DeepSpeed JSON files to summarise and check on this machine.",
        show_default=False, metavar="CONFIG")] = None,
    disk: Annotated[Path, typer.Option(metavar="PATH", help="Where NVMe offload files would go.")]
    = Path("."),
) -> None:
    """Print a copy-paste Markdown report of this machine and your configs, for bug reports."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.cli.env_report import env_report
        from accelwiz.probe.local import probe_local

        console.data(env_report(probe_local(disk), configs or []))
