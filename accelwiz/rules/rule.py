"""What a rule is: a check function with metadata. `@rule` attaches the metadata and registers nothing.

The table of rules is `accelwiz/rules/catalog.py` (ruff's codes.rs): a rule exists because the catalog lists it,
not because its module was imported. This module imports nothing from the catalog or the registry, so rule
modules (which import `rule` from here) and the catalog (which imports the rule modules) form no cycle.

Codes are grouped in blocks and never reused:
AW0xx schema (keys, types, values) · AW1xx processes, machines, launcher, plan file · AW2xx DeepSpeed · AW3xx FSDP
and parallelism · AW4xx precision and compilation · AW5xx memory (needs --model) · AW6xx hardware (needs --system)
· AW7xx the HF Trainer's arguments.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

CheckFunction = Callable[["CheckContext"], Iterable[Finding]]
CODE_PATTERN = re.compile(r"^AW\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
META_ATTRIBUTE = "rule_meta"


class Needs(str, Enum):
    """An input without which a rule does not run (the engine skips it)."""

    SYSTEM = "system"  # a machine profile: `--system local|PRESET|FILE` (or the plan's)
    WORKLOAD = "workload"  # a training workload: `--model` (or the plan's)


@dataclass(frozen=True)
class RuleMeta:
    """What `@rule` attaches to a check function. `fix` is an imperative sentence without a final period; the
    function's docstring is the user documentation, with ruff's sections (What it does, Why is this bad?,
    Example)."""

    code: str
    name: str
    severity: Severity
    fix: str
    needs: Needs | None = None


@dataclass(frozen=True)
class Rule:
    """A rule as the engine runs it: a catalog entry's function and the metadata `@rule` attached to it."""

    meta: RuleMeta
    check: CheckFunction

    @classmethod
    def of(cls, check: CheckFunction) -> Rule:
        meta = getattr(check, META_ATTRIBUTE, None)
        if not isinstance(meta, RuleMeta):
            raise TypeError(f"{check.__module__}.{check.__qualname__} has no @rule metadata")
        return cls(meta, check)

    @property
    def code(self) -> str:
        return self.meta.code

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def severity(self) -> Severity:
        return self.meta.severity

    @property
    def fix(self) -> str:
        return self.meta.fix

    @property
    def needs(self) -> Needs | None:
        return self.meta.needs

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.check.__doc__ or "")

    @property
    def summary(self) -> str:
        """The first sentence of 'What it does'."""
        match = re.search(r"## What it does\s+(.+?)(?:\n\n|$)", self.doc, re.S)
        return " ".join(match.group(1).split()) if match else self.name


def rule(code: str, name: str, severity: Severity, *, fix: str,
         needs: Needs | None = None) -> Callable[[CheckFunction], CheckFunction]:
    """Attach a rule's metadata to its check function; list the function in `catalog.py` to make it a rule."""
    meta = RuleMeta(code, name, severity, fix, Needs(needs) if needs is not None else None)

    def attach(check: CheckFunction) -> CheckFunction:
        setattr(check, META_ATTRIBUTE, meta)
        return check

    return attach
