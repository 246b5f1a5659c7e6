"""The shape of a question: data that the one loop in flow.py walks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from accelwiz.probe.model import MachineProfile

Predicate = Callable[[Mapping[str, Any], MachineProfile], bool]
Kind = Literal["select", "confirm", "int", "float", "text", "path"]


@dataclass(frozen=True)
class Choice:
    label: str
    value: Any


@dataclass(frozen=True)
class Question:
    """One question; default, choices and explain may be computed from the answers so far and the machine.

    `default=None` means the question has no default: non-interactive runs must supply an answer.
    """

    key: str
    prompt: str
    help: str
    kind: Kind
    when: Predicate
    default: Any = None
    choices: Sequence[Choice] | Callable[[Mapping[str, Any], MachineProfile], Sequence[Choice]] = ()
    explain: Callable[[Mapping[str, Any], MachineProfile], str | None] | None = None
    # Checks a parsed answer that its kind alone cannot (a model name, a range, divisibility by the answers so
    # far), where it is given: raises UsageError with a hint, and the question is asked again.
    verify: Callable[[Any, Mapping[str, Any], MachineProfile], None] | None = None
    # Says why an answer that is not among the choices here is not offered (raises UsageError with the real
    # reason and what to change), where the generic "not one of the choices" would mislead; returns otherwise.
    refuse: Callable[[Any, Mapping[str, Any], MachineProfile], None] | None = None

    def resolve_default(self, answers: Mapping[str, Any], system: MachineProfile) -> Any:
        return self.default(answers, system) if callable(self.default) else self.default

    def resolve_choices(self, answers: Mapping[str, Any], system: MachineProfile) -> Sequence[Choice]:
        return self.choices(answers, system) if callable(self.choices) else self.choices
