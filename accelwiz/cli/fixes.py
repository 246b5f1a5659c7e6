"""`check --fix`, `--unsafe-fixes` and `--diff` (ruff's model), kept apart from cli/check.py so the command only
gains three options and one call."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from accelwiz.console import Console

_PANEL = "Fixes"
FixOption = Annotated[bool, typer.Option("--fix", rich_help_panel=_PANEL,
                                         help="Apply the safe fixes, then report what remains.")]
UnsafeFixesOption = Annotated[bool, typer.Option("--unsafe-fixes", rich_help_panel=_PANEL,
                                                 help="With --fix or --diff: the unsafe fixes too (they change what "
                                                      "the run does).")]
DiffOption = Annotated[bool, typer.Option("--diff", rich_help_panel=_PANEL,
                                          help="Print the fixes as a unified diff; write nothing (exit 1 when there "
                                               "is something to fix).")]


def run_fixes(console: Console, files: list[Path], rules: list, *, unsafe: bool, diff: bool,
              **facts: Any) -> int | None:
    """Apply (or with `diff`, show) the fixes. Returns the exit code for --diff (the check does not run then);
    None after --fix, whose check then reports what remains."""
    from accelwiz.atomic import locked, resolve_target
    from accelwiz.fix.apply import plan_fixes, remaining_not_applied, write_fixes

    # The files' locks for the whole read-modify-write: a `migrate` (or another --fix) of the same file waits,
    # then this one reads what it wrote. A JSON the YAML names is not locked yet: changed meanwhile, it is refused.
    with locked([] if diff else [resolve_target(path) for path in files]):
        report = plan_fixes(files, rules, unsafe=unsafe, **facts)
        if not diff:
            written = write_fixes(report)
    if diff:
        from accelwiz.console import printable

        text = report.diff()
        if text:
            console.data(printable(text.rstrip("\n"), keep="\n\t"))
        console.info(_summary(report, "would fix"))
        return 1 if report.changed else 0
    if written:
        console.info(f"{_summary(report, 'fixed')} in {', '.join(str(p) for p in written)}")
    else:
        console.info("nothing fixed")
    for note in remaining_not_applied(report):
        console.info(f"note: {note.code} not fixed ({note.reason}): {note.message}")
    return None


def _summary(report: Any, verb: str) -> str:
    counts = Counter(note.code for note in report.applied)
    if not counts:
        return f"{verb} nothing"
    total = sum(counts.values())
    return f"{verb} {total} finding{'s' if total != 1 else ''} (" + \
        ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(counts.items())) + ")"
