"""The search behind `check --fix`: apply the fixable findings' edits one at a time, and keep an edit only if the
unit (the YAML and its JSON, re-checked from the texts in memory) then has no error it did not have before and the
finding is gone. An edit that exposes new errors is kept when each of them is fixable in this run and the fixed
point (every applicable fix applied until nothing changes) has no new error.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.fix.edits import EditError
from accelwiz.fix.outcome import FixNote, FixReport, unsafe_refused, with_reason
from accelwiz.fix.premises import doubted_premise
from accelwiz.fix.table import FIXES

if TYPE_CHECKING:
    from accelwiz.fix.table import Fix
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic

MAX_PASSES = 50
# How deep a fix may lean on the fixes of the errors it exposes (a rename that shows a quoted number: depth 1).
MAX_DEPTH = 3


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


class Unit:
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


def try_one(unit: Unit, context: CheckContext, diagnostics: list[Diagnostic], texts: dict[Path, str], judge: Any,
            selected: set[str], unsafe: bool, refused: set[tuple], report: FixReport, depth: int = 0) -> bool:
    """Apply the first fix that works; record the ones that cannot be applied. True when one was applied."""
    trying = _Trying(unit, judge, selected, unsafe, depth, _errors(diagnostics), _all_problems(diagnostics))
    for diagnostic in diagnostics:
        fix = FIXES.get(diagnostic.code)
        key = (diagnostic.code, diagnostic.file, diagnostic.path, diagnostic.message)
        if fix is None or diagnostic.code not in selected or key in refused:
            continue
        note = FixNote(diagnostic.code, diagnostic.file, diagnostic.message, fix.applicability,
                       path=tuple(diagnostic.path))
        outcome = trying.attempt(context, diagnostics, diagnostic, fix, texts)
        if isinstance(outcome, str):
            refused.add(key)
            report.not_applied.append(with_reason(note, outcome))
            continue
        trial, followers = outcome
        texts.update(trial)
        report.applied.append(note)
        report.applied.extend(followers)
        return True
    return False


@dataclass(frozen=True)
class _Trying:
    """One pass over a unit's findings: what judges an edit (every rule), what this run may apply (--select,
    --unsafe-fixes), how deep the fixes of what an edit exposes go, and the findings before any edit."""

    unit: Unit
    judge: Any
    selected: set[str]
    unsafe: bool
    depth: int
    errors_before: Counter
    problems_before: Counter

    def attempt(self, context: CheckContext, diagnostics: list[Diagnostic], diagnostic: Diagnostic, fix: Fix,
                texts: dict[Path, str]) -> str | tuple[dict[Path, str], list[FixNote]]:
        """The texts with `fix` applied (and the fixes of what it exposes), or why it is not applied."""
        if fix.applicability == "unsafe" and not self.unsafe:
            return "unsafe: pass --unsafe-fixes"
        doubted = doubted_premise(context, diagnostics, diagnostic, fix)
        if doubted is not None:
            return doubted
        edits = fix.function(context, diagnostic)
        if not edits:
            return "no unambiguous edit for this case"
        try:
            trial = _edited(texts, context, edits)
        except EditError as exc:
            return str(exc)
        after = self.unit.check(trial, self.judge)
        if after is None:
            return "the edit would leave a file that cannot be read"
        where = (diagnostic.code, diagnostic.file, diagnostic.path)
        if not _all_problems(after[1])[where] < self.problems_before[where]:
            return "the finding would remain"
        new_errors = _errors(after[1]) - self.errors_before
        return self._with_followers(trial, edits, where, new_errors) if new_errors else (trial, [])

    def _with_followers(self, trial: dict[Path, str], edits: list[Any], where: tuple, new_errors: Counter
                        ) -> str | tuple[dict[Path, str], list[FixNote]]:
        """An edit that exposes other errors (a typo'd key renamed shows its quoted number, AW005): acceptable when
        each is fixable under this mode and the fixed point (every applicable fix, until nothing changes) has no
        error the unit did not have before; the followers' fixes are then part of this one."""
        codes = sorted({code for code, _, _ in new_errors})
        unfixable = [c for c in codes if not _fixable(c, self.selected, self.unsafe)]
        settled = None if unfixable or self.depth >= MAX_DEPTH else \
            _fixed_point(self.unit, trial, self.judge, self.selected, self.unsafe, self.depth + 1)
        followers: list[FixNote] = []
        if settled is not None:
            trial, followers, final_context, final = settled
            new_errors = _errors(final) - self.errors_before
            if _all_problems(final)[where] >= self.problems_before[where]:
                new_errors[where] += 1  # a follower brought the finding back: not a fix
            elif not new_errors and not _survives(edits, final_context):
                # the followers undo the fix (a typo renamed into a key the JSON owns, then deleted as AW201):
                # the finding would go, but not by this fix, and what the user wrote would be lost
                return ("the fixes of what it exposes would undo it (" +
                        ", ".join(sorted({n.code for n in followers})) + ")")
        if new_errors:
            left = ", ".join(sorted({code for code, _, _ in new_errors}))
            return f"it would leave the pair inconsistent: {left}" + (
                f" ({', '.join(unfixable)} not fixable with these options)" if unfixable
                else " (the fixes of what it exposes do not mend it)" if settled is not None else "")
        return trial, followers


def _edited(texts: dict[Path, str], context: CheckContext, edits: list[Any]) -> dict[Path, str]:
    """`texts` with the fix's edits applied to the files of the unit they name; EditError when one cannot be."""
    trial = dict(texts)
    for role, edit in edits:
        document = context.document(role)
        if document is None:
            raise EditError(f"no {role} file in this unit")
        trial[document.path] = _apply(trial[document.path], document.syntax, [edit])
    return trial


def _fixable(code: str, selected: set[str], unsafe: bool) -> bool:
    """A finding of `code` has a fix that this run (its --select and --unsafe-fixes) would apply."""
    fix = FIXES.get(code)
    return fix is not None and code in selected and (unsafe or fix.applicability == "safe")


def _fixed_point(unit: Unit, texts: dict[Path, str], judge: Any, selected: set[str], unsafe: bool, depth: int
                 ) -> tuple[dict[Path, str], list[FixNote], CheckContext, list[Diagnostic]] | None:
    """`texts` with every applicable fix applied until none applies (at most MAX_PASSES): the texts, the fixes
    applied, and the final unit and findings; None when a text cannot be read."""
    settled, sub, refused = dict(texts), FixReport(), set()
    for _ in range(MAX_PASSES):
        checked = unit.check(settled, judge)
        if checked is None:
            return None
        if not try_one(unit, *checked, settled, judge, selected, unsafe, refused, sub, depth):
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
