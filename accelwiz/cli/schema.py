"""`accelwiz schema`: JSON Schemas for editors, generated from the config models."""

from __future__ import annotations

import shlex

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console
from accelwiz.errors import EXIT_FINDINGS


EPILOG = """\
Examples:

  $ accelwiz schema --which accelerate > accelerate-config.schema.json
  $ accelwiz schema --which plan > accelwiz-plan.schema.json
  $ accelwiz schema --write schemas/        # all three files
  $ accelwiz schema --check schemas/        # exit 1 when they are stale

Then name the schema in the file's first line for your editor:
  # yaml-language-server: $schema=accelerate-config.schema.json
"""


def schema(
    write: Annotated[Path | None, typer.Option(help="Write the schema files into this folder.")] = None,
    check_dir: Annotated[Path | None, typer.Option("--check", help="Exit 1 if the files in this folder are stale.")]
    = None,
    which: Annotated[str, typer.Option(help="Print one schema: accelerate, deepspeed or plan.")] = "accelerate",
) -> None:
    """Print or write the JSON Schemas of the Accelerate YAML, the DeepSpeed JSON and the accelwiz plan."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.config.json_schema import SCHEMA_FILES, render_schemas

        if which not in SCHEMA_FILES:
            from accelwiz.errors import UsageError

            raise UsageError(f"no schema `{which}`", hint=f"choose one of {', '.join(SCHEMA_FILES)}")
        rendered = render_schemas()
        if write is not None:
            from accelwiz.atomic import atomic_write

            for name, text in rendered.items():
                atomic_write(write / name, text)
                console.info(f"wrote {write / name}")
            return
        if check_dir is not None:
            stale = [n for n, text in rendered.items()
                     if not (check_dir / n).is_file() or (check_dir / n).read_text() != text]
            if stale:
                console.error(f"stale schema files: {', '.join(stale)}",
                              hint=f"run `accelwiz schema --write {shlex.quote(str(check_dir))}`")
                raise typer.Exit(EXIT_FINDINGS)
            console.info("schemas are up to date")
            return
        console.data(rendered[SCHEMA_FILES[which]])
