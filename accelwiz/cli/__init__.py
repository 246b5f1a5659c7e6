"""The `accelwiz` command line: thin commands registered in one place.

Command modules import only typer at module level; everything heavy (pydantic models, rich, questionary,
torch, accelerate, deepspeed) is imported inside the command that needs it, so `accelwiz --help` and
`accelwiz check` start fast.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from accelwiz import __version__
from accelwiz.cli import check, convert, doctor, env, estimate, example, init, migrate, probe, rule, run, schema
from accelwiz.cli.common import get_console, set_verbosity
from accelwiz.cli.trainer_args import SplitAtDoubleDash
from accelwiz.errors import EXIT_FINDINGS

app = typer.Typer(
    name="accelwiz",
    help="Probe the machine, plan memory, write and check Accelerate/DeepSpeed configs, then launch.\n\n"
         "Exit codes: 0 ok (warnings allowed), 1 errors found, launch failed or internal error, 2 bad usage or "
         "unreadable input, 130 interrupted. `run` passes the training process's exit code through.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: it wraps at the terminal's width and never cuts an option's name (rich's panels cut
    # `--print-node-commands` to `--print-node-comman…` at 80 columns), and it needs no rich import.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command(epilog=probe.EPILOG)(probe.probe)
app.command(name="env", epilog=env.EPILOG)(env.env)
app.command(epilog=check.EPILOG, cls=SplitAtDoubleDash)(check.check)  # `check FILES -- TRAINER ARGS`
app.command()(rule.rule)
app.command(epilog=migrate.EPILOG)(migrate.migrate)
app.command(epilog=convert.EPILOG)(convert.convert)
app.command(epilog=estimate.EPILOG)(estimate.estimate)
app.command(epilog=init.EPILOG)(init.init)
app.command(epilog=run.EPILOG, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    run.run)
app.command()(schema.schema)
app.command(epilog=doctor.EPILOG)(doctor.doctor)
app.command(epilog=example.EPILOG)(example.example)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"accelwiz {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="Say more (repeatable).")] = 0,
    quiet: Annotated[int, typer.Option("--quiet", "-q", count=True,
                                       help="Say less: -q hides notes and summaries, -qq warnings too.")] = 0,
) -> None:
    """accelwiz: the tool to reach for before `accelerate launch`."""
    set_verbosity(verbose - quiet)


def main() -> None:
    """The console script. Expected failures are handled inside the commands; anything that reaches here is a
    bug in accelwiz: say so in one line (the traceback only with ACCELWIZ_DEBUG=1) instead of dumping a stack."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - the last boundary: a bug report beats a raw traceback
        if os.environ.get("ACCELWIZ_DEBUG"):
            raise
        get_console().error(f"internal error (a bug in accelwiz {__version__}): {type(exc).__name__}: {exc}",
                            hint="rerun with ACCELWIZ_DEBUG=1 for the traceback, and please report it")
        raise SystemExit(EXIT_FINDINGS) from None
