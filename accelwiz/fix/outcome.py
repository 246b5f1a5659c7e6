"""What `check --fix` did: each fix applied or not (and why), and the texts before and after. Filled by the search
(accelwiz/fix/search.py), read by `check --fix` / `--diff`, written by `write_fixes` (accelwiz/fix/apply.py)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


def unsafe_refused(report: FixReport, unsafe: bool) -> set[tuple]:
    return set() if unsafe else {(n.code, n.file, n.path, n.message) for n in report.not_applied
                                 if n.reason.startswith("unsafe")}


def with_reason(note: FixNote, reason: str) -> FixNote:
    return FixNote(note.code, note.file, note.message, note.applicability, reason, note.path)
