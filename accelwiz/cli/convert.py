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

  $ accelwiz convert ds_zero3.yaml --to fsdp            # writes ds_zero3.fsdp.yaml
  $ accelwiz convert fsdp.yaml --to deepspeed -o ds.yaml  # writes ds.yaml and ds.ds.json
  $ accelwiz convert ds_zero3.yaml --to fsdp --model llama-8b --system 8xH100-80GB  # memory side by side
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
    micro_batch: Annotated[int, typer.Option(min=1, help="Micro-batch per GPU.", rich_help_panel="Memory")] = 1,
    seq_len: Annotated[int, typer.Option(min=1, help="Sequence length.", rich_help_panel="Memory")] = 2048,
) -> None:
    """Convert a DeepSpeed config to FSDP2 or an FSDP config to DeepSpeed, naming what is not carried."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.convert.mapping import convert as run_convert
        from accelwiz.document import load_document
        from accelwiz.errors import InputError, UsageError

        document = load_document(file)
        if document.kind != "accelerate":
            raise InputError(f"{file} is not an Accelerate YAML", hint="pass the YAML (it names the JSON)")
        from accelwiz.convert.unit import load_unit

        before = load_unit(file)  # exit 2 when the JSON it names is missing
        current = before.effective.distributed_type.value or ""  # read as the launcher reads it (an unquoted NO)
        wanted = "DEEPSPEED" if to is Target.deepspeed else "FSDP"
        if current == wanted:
            raise UsageError(f"{file} already uses {current}", hint="nothing to convert")
        if current not in ("DEEPSPEED", "FSDP"):
            raise UsageError(f"{file} uses {current or 'no distributed_type'}, not DeepSpeed or FSDP",
                             hint="convert works between DEEPSPEED and FSDP configs")
        workload = machine = None
        if model is not None:
            from accelwiz.estimate.workload import workload_from_options

            workload = workload_from_options(model=model, micro_batch=micro_batch, seq_len=seq_len)
        if system is not None:
            from accelwiz.probe.profiles import load_system

            machine = load_system(system)
        out = output or file.with_name(f"{file.stem}.{to.value}.yaml")
        if out.resolve() == file.resolve():
            raise UsageError("the output would replace the input", hint="pass -o with another name")
        yaml_text, json_text, conversion = run_convert(file, to.value, out)  # type: ignore[arg-type]
        json_path = out.with_name(out.stem + ".ds.json") if json_text is not None else None
        for path in (out, json_path):
            if path is not None and path.exists() and not force:
                raise UsageError(f"{path} exists", hint="pass --force to overwrite it, or -o another name")
        from accelwiz.convert.files import write_all

        # the JSON first, and both or neither: never a YAML naming a JSON that could not be written
        write_all([(p, t) for p, t in ((json_path, json_text), (out, yaml_text)) if p is not None and t is not None])
        console.info(f"wrote {out}" + (f" and {json_path}" if json_path else ""))
        for line in conversion.carried:
            console.info(f"  carried: {line}")
        for line in conversion.not_carried:
            console.info(f"  not carried: {line}")
        from accelwiz.rules.engine import check_paths
        from accelwiz.rules.registry import select_rules
        from accelwiz.rules.report import render_text, summary

        paths = [out] + ([json_path] if json_path else [])
        result = check_paths(paths, select_rules())
        if result.diagnostics:
            console.data(render_text(result.diagnostics, color=console.color))
        console.info(summary(result.diagnostics, unreadable=len(result.input_errors)))
        if workload is not None and result.units:
            from accelwiz.convert.memory import compare_memory

            console.data(compare_memory(before.effective, result.units[0].effective, workload, machine))
    raise typer.Exit(result.exit_code())
