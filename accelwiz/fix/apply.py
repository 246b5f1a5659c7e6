"""`check --fix` / `--diff`: the fixed texts of the files checked (`plan_fixes`, which runs the search in
accelwiz/fix/search.py until nothing more is fixable), and their writing. Nothing is written while planning:
`write_fixes` replaces the files atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from accelwiz.fix.outcome import FixNote, FixReport, unsafe_refused
from accelwiz.fix.search import MAX_PASSES, Unit, try_one


def plan_fixes(paths: list[Path], rules: list, *, unsafe: bool, **facts: Any) -> FixReport:
    """The fixed texts of `paths` (and of the JSONs their YAMLs name), without writing anything."""
    from accelwiz.atomic_update import read_for_update
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    report = FixReport()
    first = check_paths(paths, rules, **facts)
    units = [Unit(context, facts) for context in first.units]
    for unit in units:
        for path in unit.documents:
            if path not in report.original:
                report.snapshots[path] = read_for_update(path)
                report.original[path] = report.snapshots[path].text
    texts = dict(report.original)
    judge = select_rules()  # a fix may not add an error of any rule, selected or not
    selected = {r.code for r in rules}
    refused: set[tuple] = set()
    for unit in units:
        for _ in range(MAX_PASSES):
            before = unit.check(texts, judge)
            if before is None:
                break
            context, diagnostics = before
            if not try_one(unit, context, diagnostics, texts, judge, selected, unsafe, refused, report):
                break
            # the files changed: a fix refused as inconsistent or ineffective may work now (only an unsafe fix
            # without --unsafe-fixes stays refused)
            refused.intersection_update(unsafe_refused(report, unsafe))
    report.fixed = texts
    return report


def write_fixes(report: FixReport) -> list[Path]:
    """Replace the changed files through the one writer (`atomic.update_all`): all or none, each refused when it
    changed since it was read, line endings and owner kept; returns the files written."""
    from accelwiz.atomic_update import update_all

    changed = report.changed
    update_all([(report.snapshots[path], text) for path, text in changed.items()])
    return list(changed)


def remaining_not_applied(report: FixReport) -> list[FixNote]:
    """Not-applied notes, once per finding (the last reason), without the findings a later pass did fix."""
    fixed = {(n.code, n.file, n.message) for n in report.applied}
    seen: dict[tuple, FixNote] = {}
    for note in report.not_applied:
        if (note.code, note.file, note.message) not in fixed:
            seen[(note.code, note.file, note.message)] = note
    return list(seen.values())
