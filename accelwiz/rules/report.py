"""Renderers: one function per output format, each a pure function of the diagnostics."""

from __future__ import annotations

import json
from collections.abc import Sequence

from accelwiz.rules.diagnostic import Diagnostic, Severity


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
        lines.append(f"{d.file}:{d.line}:{d.column}: {code} {severity} {d.message}")
        if d.fix:
            lines.append(f"  help: {d.fix}  [{d.name}]")
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
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    return "\n".join(
        f"::{level[d.severity]} file={d.file},line={d.line},col={d.column},title={d.code} {d.name}::"
        f"{escape(d.message + (f' (help: {d.fix})' if d.fix else ''))}"
        for d in diagnostics
    )
