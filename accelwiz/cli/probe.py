"""`accelwiz probe`: what this machine (or a preset, or a saved profile) has to train with."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import SystemOption, exit_on_error, get_console

EPILOG = """\
Examples:

  $ accelwiz probe                        # GPUs, links, host, disk, packages
  $ accelwiz probe --json > node.json     # the profile as JSON on stdout
  $ accelwiz probe --save node.json --disk /local_nvme
  $ accelwiz probe --list-presets
  $ accelwiz probe --list-gpus            # every GPU --system 8xKEY accepts
  $ accelwiz probe --system 8xH100-80GB   # show a preset instead of probing

No torch import, no CUDA context: GPUs are read through NVML (nvidia-ml-py)
and honour CUDA_VISIBLE_DEVICES. A machine without a GPU or driver is a
normal result, reported in the notes.
"""


def probe(
    as_json: Annotated[bool, typer.Option("--json", help="Print the profile as JSON on stdout.")] = False,
    save: Annotated[Path | None, typer.Option(metavar="FILE", help="Write the profile to FILE (for "
                                                                   "`--system FILE` elsewhere).")] = None,
    list_presets: Annotated[bool, typer.Option("--list-presets", help="List the machine presets and exit.")]
    = False,
    list_gpus: Annotated[bool, typer.Option("--list-gpus", help="List the GPUs `--system NxGPU` accepts and exit.")]
    = False,
    system: SystemOption = None,
    disk: Annotated[Path, typer.Option(metavar="PATH", help="Where NVMe offload files would go: report its "
                                                            "free space and whether it is on NVMe.")]
    = Path("."),
) -> None:
    """Probe this machine's GPUs, interconnect, CPU, RAM, disk and ML packages (no torch import)."""
    console = get_console()
    with exit_on_error(console):
        if list_presets:
            from accelwiz.probe.render import render_presets

            render_presets(console.rich)
            return
        if list_gpus:
            from accelwiz.probe.render import render_gpus

            render_gpus(console.rich)
            return
        if system is None or system.strip().lower() == "local":
            from accelwiz.probe.local import probe_local

            profile = probe_local(disk)
        else:
            from accelwiz.probe.profiles import load_system

            profile = load_system(system)
        if save is not None:
            from accelwiz.probe.profiles import save_profile

            save_profile(profile, save)
            console.info(f"saved the machine profile to {save}")
        if as_json:
            console.data(profile.model_dump_json(indent=2))
        else:
            from accelwiz.probe.render import render_profile

            render_profile(profile, console.rich)
