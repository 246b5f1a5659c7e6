"""The `accelwiz` command line: thin commands registered in one place.

Command modules import only typer at module level; everything heavy (pydantic models, rich, questionary,
torch, accelerate, deepspeed) is imported inside the command that needs it, so `accelwiz --help` and
`accelwiz check` start fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from accelwiz import __version__
from accelwiz.cli import check, env, estimate, init, probe, rule, run, schema

app = typer.Typer(
    name="accelwiz",
    help="Probe the machine, plan memory, write and check Accelerate/DeepSpeed configs, then launch.\n\n"
         "Exit codes: 0 ok (warnings allowed), 1 errors found or launch failed, 2 bad usage or unreadable "
         "input, 130 interrupted. `run` passes the training process's exit code through.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command(epilog=probe.EPILOG)(probe.probe)
app.command(name="env", epilog=env.EPILOG)(env.env)
app.command(epilog=check.EPILOG)(check.check)
app.command()(rule.rule)
app.command(epilog=estimate.EPILOG)(estimate.estimate)
app.command(epilog=init.EPILOG)(init.init)
app.command(epilog=run.EPILOG, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    run.run)
app.command()(schema.schema)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"accelwiz {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """accelwiz: the tool to reach for before `accelerate launch`."""


def main() -> None:
    app()
