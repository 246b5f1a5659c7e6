"""The one loop that walks the catalog: ask each applicable question not already answered, then validate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from pydantic import ValidationError

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Answers
from accelwiz.wizard.catalog_types import Choice, Question


class Prompter(Protocol):
    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        """Return the parsed answer (a Choice value for selects); raise KeyboardInterrupt to cancel."""


@dataclass
class Walk:
    """The raw answers and, per question, whether its predicate applied (tests assert branch coverage)."""

    answers: dict[str, Any] = field(default_factory=dict)
    decisions: list[tuple[Question, bool]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def walk(
    catalog: Sequence[Question],
    system: MachineProfile,
    prompter: Prompter,
    preset: Mapping[str, Any] = MappingProxyType({}),
) -> Walk:
    """Ask each applicable question `preset` does not answer; preset answers are parsed like typed ones."""
    result = Walk()
    for question in catalog:
        applies = question.when(result.answers, system)
        result.decisions.append((question, applies))
        if not applies:
            if question.key in preset:
                result.ignored.append(question.key)
            continue
        choices = question.resolve_choices(result.answers, system)
        if question.key in preset:
            result.answers[question.key] = parse_answer(question, preset[question.key], choices)
            continue
        note = question.explain(result.answers, system) if question.explain else None
        result.answers[question.key] = prompter.ask(
            question, default=question.resolve_default(result.answers, system), choices=choices, note=note
        )
    return result


def ask(
    catalog: Sequence[Question],
    system: MachineProfile,
    prompter: Prompter,
    preset: Mapping[str, Any] = MappingProxyType({}),
) -> Answers:
    """Walk the catalog and return validated Answers (UsageError naming the first inconsistency)."""
    return validate(walk(catalog, system, prompter, preset).answers, system)


def reject_contradicted(result: Walk, preset: Mapping[str, Any], answers: Answers) -> None:
    """An answer to a question that did not apply is dropped with a warning when the config does not use
    the field (None) or uses the same value; one that names another value than the config will use (ZeRO-3
    on a machine without GPUs, offload with DDP) is a UsageError: the user asked for something not written.
    """
    for key in result.ignored:
        used = getattr(answers, key)
        if used is None or _same(preset[key], used):
            continue
        when = next(q.when.__name__ for q, _ in result.decisions if q.key == key)
        raise UsageError(
            f"answer `{key}: {preset[key]}` cannot apply: the question is asked only when `{when}` "
            f"holds, so the config would use {key} `{getattr(used, 'value', used)}`",
            hint=f"remove `{key}` from the answers, or change the answers or the machine (--system) "
            "it depends on",
        )


def _same(raw: Any, used: Any) -> bool:
    parse = {bool: _confirm, int: _int, float: _float}.get(type(used))
    try:
        given = parse(None, raw, ()) if parse else str(raw).strip().lower()  # type: ignore[arg-type]
        return given == getattr(used, "value", used)
    except (TypeError, ValueError):
        return False


def validate(answers: Mapping[str, Any], system: MachineProfile) -> Answers:
    data = {key: value for key, value in answers.items() if value is not None and value != ""}
    data.setdefault("gpus", system.gpu_count)
    try:
        return Answers.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise UsageError(
            f"inconsistent answers: {where + ': ' if where else ''}{message}",
            hint="change the answer (or --answers entry) named above",
        ) from None


def parse_answer(question: Question, raw: Any, choices: Sequence[Choice]) -> Any:
    """Turn a typed or scripted answer into the question's value; UsageError when it cannot be one."""
    try:
        value = _PARSERS[question.kind](question, raw, choices)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{question.key}: {exc}", hint=question.help) from None
    if question.verify is not None:
        question.verify(value)
    return value


def _select(question: Question, raw: Any, choices: Sequence[Choice]) -> Any:
    for choice in choices:
        value = getattr(choice.value, "value", choice.value)
        if raw == choice.value or str(raw).strip().lower() == str(value).lower():
            return choice.value
    valid = ", ".join(str(getattr(c.value, "value", c.value)) for c in choices)
    raise ValueError(f"{raw!r} is not one of the choices here: {valid}")


def _confirm(question: Question, raw: Any, choices: Sequence[Choice]) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("y", "yes", "true", "1", "on"):
        return True
    if text in ("n", "no", "false", "0", "off"):
        return False
    raise ValueError(f"{raw!r} is not yes or no")


def _int(question: Question, raw: Any, choices: Sequence[Choice]) -> int:
    if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
        raise ValueError(f"{raw!r} is not a whole number")
    try:
        return int(raw) if not isinstance(raw, str) else int(raw.strip().replace("_", ""))
    except ValueError:
        raise ValueError(f"{raw!r} is not a whole number") from None


def _float(question: Question, raw: Any, choices: Sequence[Choice]) -> float:
    if isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not a number")
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is not a number") from None


def _text(question: Question, raw: Any, choices: Sequence[Choice]) -> str:
    if raw is None or isinstance(raw, (dict, list)):
        raise ValueError(f"{raw!r} is not text")
    text = str(raw).strip()
    # An optional answer (default "") can be given as `none`: on a terminal, Enter keeps a remembered answer.
    return "" if question.default == "" and text.lower() == "none" else text


_PARSERS = {
    "select": _select,
    "confirm": _confirm,
    "int": _int,
    "float": _float,
    "text": _text,
    "path": _text,
}
