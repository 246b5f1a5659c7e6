"""The `accelwiz` command line: thin commands registered in one place.

Command modules import only typer at module level; everything heavy (pydantic models, rich, questionary,
torch, accelerate, deepspeed) is imported inside the command that needs it. The console script goes one step
further: it imports and builds only the command it runs (`COMMANDS` says where each lives), because typer turns
every parameter of every registered command into a pydantic adapter when it builds the click group (issue 33:
typer's adapters were 92 ms of a 0.49 s `check`). `accelwiz --help`, no command, or an unknown name build them all,
so the help lists every command and click's "No such command" sees them. `from accelwiz.cli import app` is the
full app (built on first use), as the tests invoke it.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from accelwiz import __version__
from accelwiz.cli.common import get_console, set_verbosity
from accelwiz.cli.lazy_params import lazy
from accelwiz.errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from collections.abc import Sequence

# name -> (module under accelwiz.cli, function, extra typer.command keywords); the order is `--help`'s: the
# workflow first (probe, init, check, estimate, run), then the rest. Every module has an EPILOG (its examples).
# A `cls` given as a string is "module:class".
COMMANDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "probe": ("probe", "probe", {}),
    "init": ("init", "init", {}),
    "check": ("check", "check", {"cls": "trainer_args:SplitAtDoubleDash"}),  # `check FILES -- TRAINER ARGS`
    "estimate": ("estimate", "estimate", {}),
    "run": ("run", "run", {"context_settings": {"allow_extra_args": True, "ignore_unknown_options": True}}),
    "doctor": ("doctor", "doctor", {}),
    "example": ("example", "example", {}),
    "env": ("env", "env", {}),
    "migrate": ("migrate", "migrate", {}),
    "convert": ("convert", "convert", {}),
    "rule": ("rule", "rule", {}),
    "schema": ("schema", "schema", {}),
}

# The root's own options: all flags (none takes a value), so the first other word is the command's name.
_ROOT_FLAGS = {"--version", "--verbose", "-v", "--quiet", "-q", "-h", "--help"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"accelwiz {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="Say more (repeatable).")] = 0,
    quiet: Annotated[int, typer.Option("--quiet", "-q", count=True,
                                       help="Say less: -q hides notes and summaries, -qq warnings too.")] = 0,
) -> None:
    """accelwiz: the tool to reach for before `accelerate launch`."""
    set_verbosity(verbose - quiet)


def _register(app: typer.Typer, name: str) -> None:
    module_name, function, options = COMMANDS[name]
    module = importlib.import_module(f"accelwiz.cli.{module_name}")
    options = dict(options)
    options["epilog"] = _verbatim(module.EPILOG)
    cls = options.get("cls")
    if isinstance(cls, str):
        where, class_name = cls.split(":")
        cls = getattr(importlib.import_module(f"accelwiz.cli.{where}"), class_name)
    # options left at None build no pydantic adapter (accelwiz/cli/lazy_params.py: 14 ms of `check`)
    options["cls"] = lazy(cls or TyperCommand)
    app.command(name=name, **options)(getattr(module, function))


def _verbatim(epilog: str) -> str:
    """Each paragraph of an epilog as written: click rewraps paragraphs (one `$ accelwiz ...` example ran into
    the next) unless a paragraph starts with a `\\b` line."""
    return "\n\n".join(f"\b\n{paragraph}" for paragraph in epilog.strip("\n").split("\n\n"))


def build_app(names: Sequence[str] | None = None) -> typer.Typer:
    """The root app with the commands `names` (all of `COMMANDS` when None)."""
    app = typer.Typer(
        name="accelwiz",
        help="Probe the machine, plan memory, write and check Accelerate/DeepSpeed configs, then launch.\n\n"
             "Workflow: probe -> init -> check -> estimate -> run (`accelwiz init --model tiny --defaults && "
             "accelwiz run` trains a tiny model here).\n\n"
             "Exit codes: 0 ok (warnings allowed), 1 errors found, launch failed or internal error, 2 bad usage or "
             "unreadable input, 124 a stopped rank ended the run (ACCELWIZ_STALL_TIMEOUT), 130 interrupted. `run` "
             "passes the training process's exit code through.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain click help: it wraps at the terminal's width and never cuts an option's name (rich's panels cut
        # `--print-node-commands` to `--print-node-comman…` at 80 columns), and it needs no rich import.
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for name in COMMANDS if names is None else names:
        _register(app, name)
    return app


def invoked_command(argv: Sequence[str]) -> str | None:
    """The command `argv` (without the program name) runs, when it names one of `COMMANDS`; None for `--help`,
    no command, or an unknown name (then every command is built, for the help and click's error)."""
    for word in argv:
        if word in _ROOT_FLAGS:
            if word in ("-h", "--help"):
                return None
            continue
        if word.startswith("-") and not word.startswith("--") and set(word[1:]) <= {"v", "q"}:
            continue  # -vv, -qq, -vq: counted short flags joined
        return word if word in COMMANDS else None
    return None


def __getattr__(name: str) -> Any:
    """`accelwiz.cli.app`: the full app, built once on first use (the console script builds its own)."""
    if name == "app":
        globals()["app"] = app = build_app()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """The console script. Expected failures are handled inside the commands; anything that reaches here is a
    bug in accelwiz: say so in one line (the traceback only with ACCELWIZ_DEBUG=1) instead of dumping a stack."""
    try:
        command = invoked_command(sys.argv[1:])
        build_app(None if command is None else [command])()
    except Exception as exc:  # noqa: BLE001 - the last boundary: a bug report beats a raw traceback
        if os.environ.get("ACCELWIZ_DEBUG"):
            raise
        get_console().error(f"internal error (a bug in accelwiz {__version__}): {type(exc).__name__}: {exc}",
                            hint="rerun with ACCELWIZ_DEBUG=1 for the traceback, and please report it")
        raise SystemExit(EXIT_FINDINGS) from None
