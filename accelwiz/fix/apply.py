"""`check --fix` / `--diff`: find the fixable findings, apply their edits one at a time, keep each edit only if the
unit (the YAML and its JSON, checked together) then has no error it did not have before and the finding is gone,
and repeat until nothing more is fixable. An edit that exposes new errors is kept when each of them is fixable in
this run and the fixed point (every applicable fix applied until nothing changes) has no new error. Nothing is
written here: `write_fixes` replaces the files atomically.
"""

from __future__ import annotations

import contextlib
import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.fix.edits import EditError
from accelwiz.fix.premises import doubted_premise
from accelwiz.fix.table import FIXES

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic

MAX_PASSES = 50
# How deep a fix may lean on the fixes of the errors it exposes (a rename that shows a quoted number: depth 1).
MAX_DEPTH = 3


@dataclass(frozen=True)
class FixNote:
    code: str
    file: str
    message: str
    applicability: str
    reason: str = ""  # why it was not applied
    path: tuple = ()


@dataclass
class FixReport:
    original: dict[Path, str] = field(default_factory=dict)
    fixed: dict[Path, str] = field(default_factory=dict)
    snapshots: dict[Path, Any] = field(default_factory=dict)  # atomic.Snapshot: what `write_fixes` must find
    applied: list[FixNote] = field(default_factory=list)
    not_applied: list[FixNote] = field(default_factory=list)

    @property
    def changed(self) -> dict[Path, str]:
        return {p: t for p, t in self.fixed.items() if t != self.original.get(p)}

    def diff(self) -> str:
        chunks = []
        for path, text in self.changed.items():
            chunks += difflib.unified_diff(self.original[path].splitlines(True), text.splitlines(True),
                                           fromfile=f"{path} (original)", tofile=f"{path} (fixed)")
        return "".join(chunk if chunk.endswith("\n") else chunk + "\n\\ No newline at end of file\n"
                       for chunk in chunks)


def _apply(text: str, syntax: str, edits: list[Any]) -> str:
    if syntax == "yaml":
        from accelwiz.fix.yaml_edit import apply_yaml

        return apply_yaml(text, edits)
    from accelwiz.fix.json_edit import apply_json

    return apply_json(text, edits)


def _errors(diagnostics: list[Diagnostic]) -> Counter:
    from accelwiz.rules.diagnostic import Severity

    return Counter((d.code, d.file, d.path) for d in diagnostics if d.severity is Severity.ERROR)


def _all_problems(diagnostics: list[Diagnostic]) -> Counter:
    return Counter((d.code, d.file, d.path) for d in diagnostics)


class _Unit:
    """One check unit, re-checked from texts in memory."""

    def __init__(self, context: CheckContext, facts: dict[str, Any]) -> None:
        self.documents = {d.path: d for d in context.documents}
        self.reference = context.deepspeed_reference
        self.facts = facts

    def check(self, texts: dict[Path, str], rules: Any) -> tuple[CheckContext, list[Diagnostic]] | None:
        from accelwiz.document.load import parse_text
        from accelwiz.errors import InputError
        from accelwiz.rules.engine import check_unit

        try:
            documents = [parse_text(texts[path], path, kind=doc.kind) for path, doc in self.documents.items()]
        except InputError:
            return None
        checked = check_unit(documents, deepspeed_reference=self._reference(documents), rules=rules, **self.facts)
        return checked.context, checked.diagnostics

    def _reference(self, documents: list) -> Any:
        """The YAML's deepspeed_config_file as the edited text names it (a fix may name a file, or another one):
        resolved as `check` resolves it, so an edit that names a missing file is judged by AW202."""
        from accelwiz.effective import named_deepspeed_file
        from accelwiz.errors import InputError
        from accelwiz.deepspeed_file import load_named_deepspeed, resolve_deepspeed_file

        accelerate = next((d for d in documents if d.kind == "accelerate"), None)
        written = named_deepspeed_file(accelerate)  # the one answer to "does the YAML name a JSON", as check's
        if accelerate is None or written is None:
            return None
        if self.reference is not None and self.reference.written == written:
            return self.reference
        reference = resolve_deepspeed_file(written, accelerate.path)
        if reference.resolved is not None and not any(d.kind == "deepspeed" for d in documents):
            with contextlib.suppress(InputError):  # an unreadable JSON is reported by the unit's own check
                documents.append(load_named_deepspeed(reference.resolved))
        return reference


def plan_fixes(paths: list[Path], rules: list, *, unsafe: bool, **facts: Any) -> FixReport:
    """The fixed texts of `paths` (and of the JSONs their YAMLs name), without writing anything."""
    from accelwiz.atomic import read_for_update
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    report = FixReport()
    first = check_paths(paths, rules, **facts)
    units = [_Unit(context, facts) for context in first.units]
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
            if not _try_one(unit, context, diagnostics, texts, judge, selected, unsafe, refused, report):
                break
            # the files changed: a fix refused as inconsistent or ineffective may work now (only an unsafe fix
            # without --unsafe-fixes stays refused)
            refused.intersection_update(unsafe_refused(report, unsafe))
    report.fixed = texts
    return report


def _try_one(unit: _Unit, context: CheckContext, diagnostics: list[Diagnostic], texts: dict[Path, str], judge: Any,
             selected: set[str], unsafe: bool, refused: set[tuple], report: FixReport, depth: int = 0) -> bool:
    """Apply the first fix that works; record the ones that cannot be applied. True when one was applied."""
    errors_before, problems_before = _errors(diagnostics), _all_problems(diagnostics)
    for diagnostic in diagnostics:
        fix = FIXES.get(diagnostic.code)
        key = (diagnostic.code, diagnostic.file, diagnostic.path, diagnostic.message)
        if fix is None or diagnostic.code not in selected or key in refused:
            continue
        note = FixNote(diagnostic.code, diagnostic.file, diagnostic.message, fix.applicability,
                       path=tuple(diagnostic.path))
        if fix.applicability == "unsafe" and not unsafe:
            refused.add(key)
            report.not_applied.append(_with_reason(note, "unsafe: pass --unsafe-fixes"))
            continue
        doubted = doubted_premise(context, diagnostics, diagnostic, fix)
        if doubted is not None:
            refused.add(key)
            report.not_applied.append(_with_reason(note, doubted))
            continue
        edits = fix.function(context, diagnostic)
        if not edits:
            refused.add(key)
            report.not_applied.append(_with_reason(note, "no unambiguous edit for this case"))
            continue
        trial = dict(texts)
        try:
            for role, edit in edits:
                document = context.document(role)
                if document is None:
                    raise EditError(f"no {role} file in this unit")
                trial[document.path] = _apply(trial[document.path], document.syntax, [edit])
        except EditError as exc:
            refused.add(key)
            report.not_applied.append(_with_reason(note, str(exc)))
            continue
        after = unit.check(trial, judge)
        if after is None:
            refused.add(key)
            report.not_applied.append(_with_reason(note, "the edit would leave a file that cannot be read"))
            continue
        where = (diagnostic.code, diagnostic.file, diagnostic.path)
        new_errors = _errors(after[1]) - errors_before
        if not _all_problems(after[1])[where] < problems_before[where]:
            refused.add(key)
            report.not_applied.append(_with_reason(note, "the finding would remain"))
            continue
        followers: list[FixNote] = []
        if new_errors:
            # The edit exposes other errors (a typo'd key renamed shows its quoted number, AW005). Acceptable when
            # each is fixable under this mode and the fixed point (every applicable fix, until nothing changes)
            # has no error the unit did not have before; the followers' fixes are then part of this one.
            codes = sorted({code for code, _, _ in new_errors})
            unfixable = [c for c in codes if not _fixable(c, selected, unsafe)]
            settled = None if unfixable or depth >= MAX_DEPTH else \
                _fixed_point(unit, trial, judge, selected, unsafe, depth + 1)
            if settled is not None:
                trial, followers, final_context, final = settled
                new_errors = _errors(final) - errors_before
                if _all_problems(final)[where] >= problems_before[where]:
                    new_errors[where] += 1  # a follower brought the finding back: not a fix
                elif not new_errors and not _survives(edits, final_context):
                    # the followers undo the fix (a typo renamed into a key the JSON owns, then deleted as AW201):
                    # the finding would go, but not by this fix, and what the user wrote would be lost
                    refused.add(key)
                    report.not_applied.append(_with_reason(
                        note, "the fixes of what it exposes would undo it (" +
                        ", ".join(sorted({n.code for n in followers})) + ")"))
                    continue
            if new_errors:
                refused.add(key)
                left = ", ".join(sorted({code for code, _, _ in new_errors}))
                why = f"it would leave the pair inconsistent: {left}" + (
                    f" ({', '.join(unfixable)} not fixable with these options)" if unfixable
                    else " (the fixes of what it exposes do not mend it)" if settled is not None else "")
                report.not_applied.append(_with_reason(note, why))
                continue
        texts.update(trial)
        report.applied.append(note)
        report.applied.extend(followers)
        return True
    return False


def _fixable(code: str, selected: set[str], unsafe: bool) -> bool:
    """A finding of `code` has a fix that this run (its --select and --unsafe-fixes) would apply."""
    fix = FIXES.get(code)
    return fix is not None and code in selected and (unsafe or fix.applicability == "safe")


def _fixed_point(unit: _Unit, texts: dict[Path, str], judge: Any, selected: set[str], unsafe: bool, depth: int
                 ) -> tuple[dict[Path, str], list[FixNote], CheckContext, list[Diagnostic]] | None:
    """`texts` with every applicable fix applied until none applies (at most MAX_PASSES): the texts, the fixes
    applied, and the final unit and findings; None when a text cannot be read."""
    settled, sub, refused = dict(texts), FixReport(), set()
    for _ in range(MAX_PASSES):
        checked = unit.check(settled, judge)
        if checked is None:
            return None
        if not _try_one(unit, *checked, settled, judge, selected, unsafe, refused, sub, depth):
            return settled, sub.applied, *checked
        refused.intersection_update(unsafe_refused(sub, unsafe))
    checked = unit.check(settled, judge)
    return None if checked is None else (settled, sub.applied, *checked)


def _survives(edits: list[Any], context: CheckContext) -> bool:
    """Every key the fix wrote (renamed, set, added) is still there after the followers' fixes."""
    from accelwiz.fix.edits import AddKey, RenameKey, SetValue

    for role, edit in edits:
        document = context.document(role)
        if isinstance(edit, RenameKey):
            written = (*edit.path[:-1], edit.new_name)
        elif isinstance(edit, SetValue):
            written = tuple(edit.path)
        elif isinstance(edit, AddKey):
            written = (*edit.parent, edit.key)
        else:
            continue
        if document is None or not document.has(*written):
            return False
    return True


def unsafe_refused(report: FixReport, unsafe: bool) -> set[tuple]:
    return set() if unsafe else {(n.code, n.file, n.path, n.message) for n in report.not_applied
                                 if n.reason.startswith("unsafe")}


def _with_reason(note: FixNote, reason: str) -> FixNote:
    return FixNote(note.code, note.file, note.message, note.applicability, reason, note.path)


def write_fixes(report: FixReport) -> list[Path]:
    """Replace the changed files through the one writer (`atomic.update_all`): all or none, each refused when it
    changed since it was read, line endings and owner kept; returns the files written."""
    from accelwiz.atomic import update_all

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
