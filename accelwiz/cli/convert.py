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
        from accelwiz.defaults import find_plan, plan_path_for

        source_plan = None
        if find_plan(file) is not None:  # what init planned: the launcher, the machine, the workload
            from accelwiz.plan_file import load_plan

            source_plan = load_plan(find_plan(file))  # type: ignore[arg-type]
        workload = machine = None
        if model is not None:
            from accelwiz.resolution.options import workload_from_options

            workload = workload_from_options(model=model, micro_batch=micro_batch, seq_len=seq_len)
        if system is not None:
            from accelwiz.probe.profiles import load_system

            machine = load_system(system)
        out = output or file.with_name(f"{file.stem}.{to.value}.yaml")
        if out.resolve() == file.resolve():
            raise UsageError("the output would replace the input", hint="pass -o with another name")
        from accelwiz.fix.edits import EditError

        try:
            yaml_text, json_text, conversion = run_convert(file, to.value, out)  # type: ignore[arg-type]
        except EditError as exc:  # a duplicate key, a layout the round-trip editor cannot keep
            raise InputError(f"cannot convert {file}: {exc}",
                             hint="remove duplicate keys and use plain two-space indentation, then convert "
                                  "again") from None
        json_path = out.with_name(out.stem + ".ds.json") if json_text is not None else None
        plan_path = plan_text = None
        if source_plan is not None:
            import shlex

            from accelwiz.convert.carried_plan import converted_plan
            from accelwiz.plan_file import dump_plan

            plan_path = plan_path_for(out)
            # what wrote these files (the memory options do not change them)
            command = shlex.join(["accelwiz", "convert", str(file), "--to", to.value, "-o", str(out)])
            plan_text = dump_plan(converted_plan(source_plan, yaml_path=out, yaml_text=yaml_text,
                                                 json_path=json_path, json_text=json_text, command=command))
        for path in (out, json_path, plan_path):
            if path is not None and path.exists() and not force:
                raise UsageError(f"{path} exists", hint="pass --force to overwrite it, or -o another name")
        from accelwiz.convert.files import write_all

        # the JSON and the plan first, and all or none: never a YAML naming a JSON that could not be written
        write_all([(p, t) for p, t in ((json_path, json_text), (plan_path, plan_text), (out, yaml_text))
                   if p is not None and t is not None], force=force)
        console.info(f"wrote {out}" + (f" and {json_path}" if json_path else "")
                     + (f" and {plan_path} (the plan, from {source_plan.path})" if plan_path and source_plan else ""))
        for line in conversion.carried:
            console.info(f"  carried: {line}")
        for line in conversion.not_carried:
            console.info(f"  not carried: {line}")
        from accelwiz.rules.engine import check_with_plans
        from accelwiz.rules.registry import select_rules
        from accelwiz.rules.report import render_text, summary

        paths = [out] + ([json_path] if json_path else [])
        result = check_with_plans(paths, select_rules())  # with the plan just written, as `accelwiz check OUT`
        if result.diagnostics:
            console.data(render_text(result.diagnostics, color=console.color))
        console.info(summary(result.diagnostics, unreadable=len(result.input_errors)))
        if source_plan is not None:
            # the plan's workload and machine where the options do not say (the table judged "?" without them):
            # the plan is the base, --model, --micro-batch and --seq-len replace one field each, as in `check`
            from accelwiz.plan_file import plan_system
            from accelwiz.resolution.plan import plan_workload

            flags = {k: v for k, v in (("micro_batch", micro_batch), ("seq_len", seq_len)) if v is not None}
            planned, _why = plan_workload(source_plan, flags, model=workload.model if workload else None)
            workload = planned or workload
            machine = machine or plan_system(source_plan)
        if workload is not None and result.units:
            from accelwiz.convert.memory import compare_memory

            console.data(compare_memory(before.effective, result.units[0].effective, workload, machine))
    raise typer.Exit(result.exit_code())
