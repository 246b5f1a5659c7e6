"""What a rule is: a check function with metadata. `@rule` attaches the metadata and registers nothing.

The table of rules is `accelwiz/rules/catalog.py` (ruff's codes.rs): a rule exists because the catalog lists it,
not because its module was imported. The catalog names each function through a `RuleModule` (where the module is,
and which inputs every rule in it needs), so listing a rule imports nothing: the engine imports a rule's module
only for a unit that has those inputs (`inputs_of`), and a YAML-only check never loads the Trainer, TRL, memory or
hardware rules. This module imports nothing from the catalog or the registry, so rule modules (which import
`rule` from here) and the catalog form no cycle.

Codes are grouped in blocks and never reused:
AW0xx schema (keys, types, values) · AW1xx processes, machines, launcher, plan file · AW2xx DeepSpeed · AW3xx FSDP
and parallelism · AW4xx precision and compilation · AW5xx memory (needs --model) · AW6xx hardware (needs --system)
· AW7xx the HF Trainer's arguments.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

CheckFunction = Callable[["CheckContext"], Iterable[Finding]]
CODE_PATTERN = re.compile(r"^AW\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
META_ATTRIBUTE = "rule_meta"


class Needs(str, Enum):
    """An input without which a rule does not run (the engine skips it). `@rule(needs=...)` names one for a rule;
    a `RuleModule` names those every rule of its module needs, so the engine need not import the module."""

    SYSTEM = "system"  # a machine profile: `--system local|PRESET|FILE` (or the plan's)
    WORKLOAD = "workload"  # a training workload: `--model` (or the plan's)
    ACCELERATE = "accelerate"  # an Accelerate YAML in the unit (a DeepSpeed JSON alone has none)
    TRAINER = "trainer"  # the Trainer's arguments: `--training-args FILE` or `-- ARGS` (or the plan's)
    TRL = "trl"  # TRL's arguments: `check --kind dpo|grpo`
    PLAN = "plan"  # the plan file init wrote (beside the YAML, or `--plan FILE`)


def inputs_of(context: CheckContext) -> frozenset[Needs]:
    """The inputs a unit has: what selects the rule modules (and the rules) that run on it."""
    args = context.training_args
    present = {
        Needs.SYSTEM: context.system is not None,
        Needs.WORKLOAD: context.workload is not None,
        Needs.ACCELERATE: context.accelerate is not None,
        Needs.TRAINER: args is not None,
        Needs.TRL: hasattr(args, "trl"),  # TrlArguments, as trl_batch.trl_view tells them apart
        Needs.PLAN: context.plan is not None,
    }
    return frozenset(need for need, here in present.items() if here)


@dataclass(frozen=True, init=False)
class RuleModule:
    """A rule module as the catalog declares it: its name under accelwiz.rules and the inputs every one of its
    rules needs. `module.function` names a check function without importing it (a `RuleRef`)."""

    name: str
    needs: frozenset[Needs] = frozenset()

    def __init__(self, name: str, *needs: Needs) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "needs", frozenset(Needs(n) for n in needs))

    @property
    def path(self) -> str:
        return f"accelwiz.rules.{self.name}"

    def __getattr__(self, function: str) -> RuleRef:
        if function.startswith("_"):  # copy, pickle and friends probe dunders: not check functions
            raise AttributeError(function)
        return RuleRef(self, function)


@dataclass(frozen=True)
class RuleRef:
    """A catalog entry's check function, by module and name; `load()` imports the module."""

    module: RuleModule
    function: str

    def load(self) -> CheckFunction:
        loaded: Any = getattr(importlib.import_module(self.module.path), self.function, None)
        if not callable(loaded):
            raise RuntimeError(f"the catalog lists {self.module.path}.{self.function}, which does not exist")
        return loaded


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
    """A rule as the engine runs it: a catalog entry's code, its check function (or the `RuleRef` naming it,
    imported on first use of the function or of the metadata `@rule` attached to it), and the inputs its module's
    rules all need (the catalog's declaration)."""

    code: str
    source: CheckFunction | RuleRef = field(repr=False)
    inputs: frozenset[Needs] = frozenset()

    @classmethod
    def of(cls, check: CheckFunction) -> Rule:
        return cls(_meta_of(check).code, check)

    @cached_property
    def check(self) -> CheckFunction:
        return self.source.load() if isinstance(self.source, RuleRef) else self.source

    @cached_property
    def meta(self) -> RuleMeta:
        meta = _meta_of(self.check)
        if meta.code != self.code:
            raise RuntimeError(f"catalog lists {self.check.__module__}.{self.check.__name__} as {self.code}, but "
                               f"its @rule says {meta.code}")
        return meta

    def runs_on(self, available: frozenset[Needs]) -> bool:
        """Whether the rule runs on a unit with these inputs: the module's declared inputs first (no import),
        then the rule's own `needs`."""
        return self.inputs <= available and (self.needs is None or self.needs in available)

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


def _meta_of(check: CheckFunction) -> RuleMeta:
    meta = getattr(check, META_ATTRIBUTE, None)
    if not isinstance(meta, RuleMeta):
        raise TypeError(f"{check.__module__}.{check.__qualname__} has no @rule metadata")
    return meta


def rule(code: str, name: str, severity: Severity, *, fix: str,
         needs: Needs | None = None) -> Callable[[CheckFunction], CheckFunction]:
    """Attach a rule's metadata to its check function; list the function in `catalog.py` to make it a rule."""
    meta = RuleMeta(code, name, severity, fix, Needs(needs) if needs is not None else None)

    def attach(check: CheckFunction) -> CheckFunction:
        setattr(check, META_ATTRIBUTE, meta)
        return check

    return attach
