"""Diagnostics are data; renderers (report.py) decide how they look."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from accelwiz.document import KeyPath

Role = Literal["accelerate", "deepspeed"]


class Severity(str, Enum):
    """error: the run fails or silently does something else; warning: it runs, but not as written or wastefully;
    info: a suggestion."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True)
class Finding:
    """What a rule yields: which file (by role), which key path, a message with the actual values, and
    optionally a fix specific to this case (otherwise the rule's own fix is shown).

    `handled` says why the launch as planned makes the finding moot (a rule reads that from
    `ctx.launch`, e.g. `run` sets ACCELERATE_USE_CPU=true); the engine reports such findings apart, as notes.
    """

    role: Role | None
    path: KeyPath
    message: str
    fix: str | None = None
    handled: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    """A finding placed in a file, with its rule's code, name, severity and fix."""

    code: str
    name: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    path: KeyPath
    fix: str | None
    handled: str | None = None  # why the launch as planned makes it moot (see Finding.handled)

    @property
    def dotted_path(self) -> str:
        return ".".join(str(p) for p in self.path)
