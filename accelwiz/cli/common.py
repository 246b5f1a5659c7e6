"""What every command shares: the console, the error boundary, and option declarations written once."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from enum import Enum
from typing import Annotated, Any

import typer

from accelwiz.console import Console
from accelwiz.errors import EXIT_INTERRUPTED, EXIT_USAGE, AccelwizError, UsageError

_verbosity: int | None = None  # set once by the root callback from -v/-q


def set_verbosity(verbosity: int) -> None:
    global _verbosity
    _verbosity = verbosity


def get_console() -> Console:
    """The console for this invocation: -v/-q on the command line, else ACCELWIZ_VERBOSITY, else 0."""
    if _verbosity is not None:
        return Console(verbosity=_verbosity)
    try:
        return Console(verbosity=int(os.environ.get("ACCELWIZ_VERBOSITY", "0")))
    except ValueError:
        return Console()


@contextlib.contextmanager
def exit_on_error(console: Console) -> Iterator[None]:
    """The one place where expected exceptions become a message, a hint and an exit code; and where every
    command's integer flags are bounded (`refuse_huge_numbers`), before the command computes with them."""
    try:
        refuse_huge_numbers()
        yield
    except AccelwizError as exc:
        console.error(exc.message, hint=exc.hint)
        raise typer.Exit(exc.exit_code) from None
    except OverflowError as exc:  # a product of bounded flags still beyond a float: a usage error, not a bug
        console.error(f"a number is too large to compute with ({exc})",
                      hint="pass counts and sizes a machine can have")
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        console.error("interrupted; nothing was written")
        raise typer.Exit(EXIT_INTERRUPTED) from None


MAX_FLAG_INTEGER = 2**63 - 1  # any count or size a machine has; `--micro-batch 10**400` overflowed a float


def refuse_huge_numbers() -> None:
    """Every integer flag of the command being run (click parses them as Python ints of any size) at most
    MAX_FLAG_INTEGER in magnitude: one UsageError naming the flag, instead of an OverflowError deep in the
    estimate. Read from the running command's context: one check for every command and flag."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # another typer: the OverflowError boundary in exit_on_error still holds
        return
    context = get_current_context(silent=True)
    if context is None:
        return
    flags = {p.name: p.opts for p in context.command.params}
    for name, value in context.params.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for number in values:
            if isinstance(number, int) and not isinstance(number, bool) and abs(number) > MAX_FLAG_INTEGER:
                flag = (flags.get(name) or [f"--{name}"])[0]
                digits = int(number.bit_length() * 0.30103) + 1
                raise UsageError(f"{flag}: a number of {digits} digits is too large (at most {MAX_FLAG_INTEGER:,})",
                                 hint=f"pass {flag} as a count or size a machine can have")


def split_codes(values: list[str] | None) -> list[str]:
    """`--select AW1,AW2 --select AW3` -> ["AW1", "AW2", "AW3"]."""
    return [part.strip().upper() for value in values or [] for part in value.split(",") if part.strip()]


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


SystemOption = Annotated[str | None, typer.Option(
    "--system", metavar="FILE|PRESET|local",
    help="Plan for a machine: a profile from `accelwiz probe --save`, a preset (`accelwiz probe --list-presets`), "
         "or `local` for this machine.")]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]


MethodOption = Annotated[str | None, typer.Option(
    metavar="full|lora|qlora", show_default=False,
    help="Fine-tuning method, as `init` and `run` take it (default: the plan's, else full); --lora and --qlora "
         "are short for --method lora and --method qlora.")]
_METHODS = ("full", "lora", "qlora")


def chosen_method(*, method: str | None, lora: bool, qlora: bool) -> str | None:
    """The one method --method, --lora and --qlora name between them (None: none given); refused in one line
    where they name two."""
    named = {name for name, given in (("lora", lora), ("qlora", qlora)) if given}
    if method is not None:
        if method.lower() not in _METHODS:
            raise UsageError(f"--method {method} is not a method", hint="pass full, lora or qlora")
        named.add(method.lower())
    if len(named) > 1:
        flags = ", ".join(sorted(f"--method {name}" if name == (method or "").lower() else f"--{name}"
                                 for name in named))
        raise UsageError(f"{flags} name two methods", hint="pass one: QLoRA is LoRA on a 4-bit base")
    return next(iter(named), None)


def checked_flags(*, lora: bool = False, qlora: bool = False, method: str | None = None,
                  micro_batch: int | None = None, seq_len: int | None = None, **given: Any) -> dict[str, Any]:
    """The workload flags a command was given, checked where every command checks them: --lora and --qlora
    excluding each other, then ranges and choices (accelwiz.resolution.options.flags_from_options: one line with
    the valid values). Returned by the resolution's names (`method` for --lora/--qlora); `estimate` takes its
    flags through here, `check` through `workload_flags`."""
    regime = chosen_method(method=method, lora=lora, qlora=qlora)
    from accelwiz.resolution.options import flags_from_options

    return flags_from_options(micro_batch=micro_batch, seq_len=seq_len, regime=regime, **given)


def workload_flags(*, lora: bool = False, qlora: bool = False, method: str | None = None,
                   **given: Any) -> dict[str, Any]:
    """The workload flags a command was given (None: not given), checked by `checked_flags`, by check's names
    (`regime` for --method/--lora/--qlora): only those given."""
    checked_flags(lora=lora, qlora=qlora, method=method, **given)  # refuses a bad value
    given["regime"] = chosen_method(method=method, lora=lora, qlora=qlora)
    return {name: value for name, value in given.items() if value is not None}
