"""The rule registry: one decorated function per rule; its docstring is the user documentation.

Codes are grouped in blocks and never reused:
AW0xx schema (keys, types, values) · AW1xx processes, machines, launcher · AW2xx DeepSpeed · AW3xx FSDP and
parallelism · AW4xx precision and compilation · AW5xx memory (needs --model) · AW6xx hardware (needs --system).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

CheckFunction = Callable[["CheckContext"], Iterable[Finding]]
CODE_PATTERN = re.compile(r"^AW\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    fix: str
    check: CheckFunction
    doc: str
    needs: str | None = None  # "system" or "workload": the rule only runs when that input is given

    @property
    def summary(self) -> str:
        """The first sentence of 'What it does'."""
        match = re.search(r"## What it does\s+(.+?)(?:\n\n|$)", self.doc, re.S)
        return " ".join(match.group(1).split()) if match else self.name


RULES: dict[str, Rule] = {}


def rule(code: str, name: str, severity: Severity, *, fix: str,
         needs: str | None = None) -> Callable[[CheckFunction], CheckFunction]:
    """Register a rule. `fix` is an imperative sentence; the docstring has ruff's sections."""

    def register(check: CheckFunction) -> CheckFunction:
        if code in RULES:
            raise RuntimeError(f"duplicate rule code {code}")
        RULES[code] = Rule(code, name, severity, fix, check, inspect.cleandoc(check.__doc__ or ""), needs)
        return check

    return register


def load_all_rules() -> dict[str, Rule]:
    """Import every rule module (registration happens at import) and return the registry sorted by code."""
    from accelwiz.rules import catalog  # noqa: F401  (imports the rule modules)

    return dict(sorted(RULES.items()))


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules whose code starts with a selected prefix (all when none) and with no ignored prefix."""
    select, ignore = tuple(s.upper() for s in select), tuple(s.upper() for s in ignore)
    return [r for code, r in load_all_rules().items()
            if (not select or code.startswith(select)) and not (ignore and code.startswith(ignore))]
