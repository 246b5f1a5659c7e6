"""Renderers: one function per output format, each a pure function of the diagnostics.

File names, messages and values come from the files checked; the text renderers pass each through
`console.printable`, so an escape sequence in a key or a value is shown, never obeyed by the terminal. JSON
needs nothing more: `json.dumps` writes every control character as `\\uXXXX`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from accelwiz.console import printable
from accelwiz.rules.diagnostic import Diagnostic, Severity

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveValue
    from accelwiz.rules.context import CheckContext


def summary(diagnostics: Sequence[Diagnostic], *, unreadable: int = 0) -> str:
    """`2 errors, 1 warning.`; files that could not be read are counted too, never hidden behind "No problems"."""
    counts = {s: sum(d.severity is s for d in diagnostics) for s in Severity}
    parts = [f"{n} {s.value}{'' if n == 1 else 's'}" for s, n in counts.items() if n]
    if unreadable:
        parts.append(f"{unreadable} file{'' if unreadable == 1 else 's'} could not be read")
    return ", ".join(parts) + "." if parts else "No problems found."


def render_text(diagnostics: Sequence[Diagnostic], *, color: bool = False) -> str:
    """`file:line:col: CODE severity message`, then an indented help line; ruff's concise format."""
    colors = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFO: "1;34"}
    lines = []
    for d in diagnostics:
        severity = f"\x1b[{colors[d.severity]}m{d.severity.value}\x1b[0m" if color else d.severity.value
        code = f"\x1b[1m{d.code}\x1b[0m" if color else d.code
        lines.append(f"{printable(d.file)}:{d.line}:{d.column}: {code} {severity} {printable(d.message)}")
        if d.fix:
            lines.append(f"  help: {printable(d.fix)}  [{d.name}]")
    return "\n".join(lines)


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([
        {"code": d.code, "name": d.name, "severity": d.severity.value, "message": d.message, "file": d.file,
         "line": d.line, "column": d.column, "path": list(d.path), "fix": d.fix}
        for d in diagnostics
    ], indent=2)


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands, so findings appear as annotations on the pull request."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}

    def escape(text: str) -> str:
        return printable(text).replace("%", "%25")

    def escape_property(text: str) -> str:  # a property value ends at `,` and the properties at `::`
        return escape(text).replace(",", "%2C").replace(":", "%3A")

    return "\n".join(
        f"::{level[d.severity]} file={escape_property(d.file)},line={d.line},col={d.column},"
        f"title={d.code} {d.name}::"
        f"{escape(d.message + (f' (help: {d.fix})' if d.fix else ''))}"
        for d in diagnostics
    )


def render_explanation(unit: CheckContext, workload: Any = None) -> str:
    """A plain-text table of every effective value and its source, for `accelwiz check --explain`, then the
    workload's values no file writes (`ResolvedWorkload.explained`; `workload` None: the unit's own resolution)."""
    from accelwiz.rules.unit_workload import unit_resolution

    names = " + ".join(printable(d.name) for d in unit.documents) or "<no files>"
    effective = unit.effective
    rows = [("setting", "value", "source", "written at / why")]
    for name, item in effective.items():
        if item.source == "unset" and item.value is None and not item.note and not item.path:
            continue
        rows.append((name, printable(_shown(item.value)), item.source, printable(_origin(unit, item))))
    for name, sourced in (workload or unit_resolution(unit)).explained():
        rows.append((name, printable(_shown(sourced.value)), sourced.source, printable(sourced.note)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [f"Effective values for {names}:"]
    for row in rows:
        cells = "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        lines.append(f"  {cells}  {row[3]}")
    if effective.json_alone:
        lines.append("  (a DeepSpeed JSON checked alone: values marked \"auto\" depend on the launcher)")
    return "\n".join(line.rstrip() for line in lines)


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _origin(unit: CheckContext, item: EffectiveValue) -> str:
    parts = []
    if item.path:
        document = unit.document(item.role)
        where = ".".join(map(str, item.path))
        if document is not None:
            where = f"{document.path.name}:{document.span(item.path).line} {where}"
        elif item.role == "plan":
            plan_path = unit.plan.path if unit.plan is not None else None
            where = f"{plan_path.name if plan_path is not None else 'plan'} {where}"
        parts.append(where)
    if item.note:
        parts.append(item.note)
    return "; ".join(parts)
