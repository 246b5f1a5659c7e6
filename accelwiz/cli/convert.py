"""`accelwiz convert`: the same training on the other backend (DeepSpeed ZeRO <-> FSDP2), with what cannot be
carried named."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import SystemOption, exit_on_error, get_console

EPILOG = """\
Examples:

  $ accelwiz convert ds_zero3.yaml --to fsdp       # writes ds_zero3.fsdp.yaml
  $ accelwiz convert fsdp.yaml --to deepspeed -o ds.yaml   # + ds.ds.json
  $ accelwiz convert ds_zero3.yaml --to fsdp --model llama-8b \\
      --system 8xH100-80GB                         # memory side by side
"""


class Target(str, Enum):
    deepspeed = "deepspeed"
    fsdp = "fsdp"


def convert(
    file: Annotated[Path, typer.Argument(help="The Accelerate YAML to convert.", show_default=False)],
    to: Annotated[Target, typer.Option("--to", help="The backend to convert to.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="OUT", show_default=False,
                                                help="The new YAML (default: FILE's name + .fsdp.yaml / "
                                                     ".deepspeed.yaml); a DeepSpeed JSON goes beside it.")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite OUT (and its JSON) if they exist.")] = False,
    model: Annotated[str | None, typer.Option(help="Model preset, config.json or parameter count: per-GPU memory "
                                                   "of both configs side by side.", rich_help_panel="Memory")]
    = None,
    system: SystemOption = None,
    micro_batch: Annotated[int | None, typer.Option(min=1, help="Micro-batch per GPU (default: the plan's, else 1).",
                                                    rich_help_panel="Memory")] = None,
    seq_len: Annotated[int | None, typer.Option(min=1, help="Sequence length (default: the plan's, else 2048).",
                                                rich_help_panel="Memory")] = None,
) -> None:
    """Convert a DeepSpeed config to FSDP2 or an FSDP config to DeepSpeed, naming what is not carried."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.convert.request import ConvertRequest, convert_files
        from accelwiz.rules.report import render_text, summary

        done = convert_files(ConvertRequest(file, to.value, output, force, model, system,  # type: ignore[arg-type]
                                            {"micro_batch": micro_batch, "seq_len": seq_len}))
        console.info(f"wrote {done.output}" + (f" and {done.json_path}" if done.json_path else "")
                     + (f" and {done.plan_path} (the plan, from {done.source_plan})" if done.plan_path else ""))
        for line in done.carried:
            console.info(f"  carried: {line}")
        for line in done.not_carried:
            console.info(f"  not carried: {line}")
        if done.check.diagnostics:
            console.data(render_text(done.check.diagnostics, color=console.color))
        console.info(summary(done.check.diagnostics, unreadable=len(done.check.input_errors)))
        if done.memory is not None:
            console.data(done.memory)
    raise typer.Exit(done.check.exit_code())
