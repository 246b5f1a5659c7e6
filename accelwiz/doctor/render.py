"""The report for people (one rich table, the same on every node, titled "accelwiz preflight") and for CI
(JSON). The table lists the problems when there are any, else one row per node with what was compared."""

from __future__ import annotations

from typing import Any

from accelwiz.doctor.model import Report

SHOWN_PACKAGES = ("torch", "accelerate", "deepspeed", "transformers", "trl")
WIDTH = 120  # job logs have no terminal, and rich would assume 80 columns: a finding per line or two there


def title(report: Report) -> str:
    nodes = f"{report.nodes} node{'s' if report.nodes != 1 else ''}"
    if report.findings:
        count = len(report.findings)
        return (f"accelwiz preflight: {nodes}, {count} problem{'s' if count != 1 else ''} "
                f"(exit {report.exit_code}; this is node {report.this_node})")
    return f"accelwiz preflight: {nodes} ready to train (node {report.this_node})"


def render_text(report: Report, rich_console: Any) -> None:
    from rich.table import Table

    table = Table(title=title(report), title_justify="left", show_lines=bool(report.findings))
    if report.findings:
        for column in ("node", "problem", "check", "finding", "fix"):
            table.add_column(column, overflow="fold")
        for f in report.findings:
            node = "all" if f.node is None else f"{f.node}{f' ({f.host})' if f.host else ''}"
            table.add_row(*map(_cell, (node, f.problem.value, f.check, f.detail, f.hint)))
    else:
        for column in ("node", "host", "GPUs", "Python", *SHOWN_PACKAGES):
            table.add_column(column, overflow="fold")
        for n in report.facts:
            gpus = f"{n.gpus.count} x {', '.join(n.gpus.models)}" if n.gpus.count else "none"
            table.add_row(*map(_cell, (str(n.rank), n.hostname, gpus, n.python,
                                       *(n.packages.get(p) or "-" for p in SHOWN_PACKAGES))))
    if not rich_console.is_terminal:
        rich_console.width = max(WIDTH, rich_console.width)
    rich_console.print(table)
    for line in _footer(report):
        rich_console.print(_cell(line))


def _cell(text: str) -> str:
    """A value for rich: peers' hostnames, versions and variables are data, never markup or a control sequence."""
    from rich.markup import escape

    from accelwiz.console import printable

    return escape(printable(text))


def _footer(report: Report) -> list[str]:
    lines = []
    for rank, result in sorted(report.allreduce.items()):
        if result.error is None and result.bus_bandwidth_gbps is not None:
            lines.append(f"all-reduce ({result.backend}) on node {rank}: {result.size_bytes / 2**20:.0f} MiB x "
                         f"{result.iterations} in {result.seconds:.3f} s, bus bandwidth "
                         f"{result.bus_bandwidth_gbps:.2f} GB/s")
    lines += [f"note: {note}" for note in report.notes]
    lines.append(f"main {report.main}; waited {report.waited_seconds:.1f} s")
    return lines


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2)
