"""The one loop that walks the catalog: ask each applicable question not already answered, then validate."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from pydantic import ValidationError

from accelwiz.errors import InputError, UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Answers
from accelwiz.wizard.catalog_types import Choice, Question


class GoBack(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a prompter: the user asked to go back one question."""


class Prompter(Protocol):
    def ask(
        self,
        question: Question,
        *,
        default: Any,
        choices: Sequence[Choice],
        note: str | None,
        check: Callable[[Any], Any],
    ) -> Any:
        """Return the answer (raw text or a Choice value; `check(raw)` parses and verifies it, raising UsageError,
        so a terminal can refuse a bad answer at its prompt); raise GoBack to go back, KeyboardInterrupt to
        cancel."""


@dataclass
class Walk:
    """The raw answers, per question whether its predicate applied (tests assert branch coverage), the keys
    asked of the prompter in order, and the machine (the system question, when walked, replaces it)."""

    answers: dict[str, Any] = field(default_factory=dict)
    decisions: list[tuple[Question, bool]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    system: MachineProfile | None = None
    system_spec: str | None = None


SYSTEM_KEY = "system"


def walk(
    catalog: Sequence[Question],
    system: MachineProfile | None,
    prompter: Prompter,
    preset: Mapping[str, Any] = MappingProxyType({}),
    *,
    keep: Mapping[str, Any] = MappingProxyType({}),
    remembered: dict[str, Any] | None = None,
    on_refused: Callable[[Question, UsageError], None] | None = None,
) -> Walk:
    """Ask each applicable question, in order, that `preset` does not answer.

    - `preset` answers (options, answer files) are parsed and verified like typed ones; a bad one is an error.
    - `keep` answers (an earlier walk: going back, editing one answer) are taken without asking where they still
      parse and verify, and asked (with the old answer as the default where it is still a choice) where not.
    - `remembered` collects every answer given; its values are the defaults when a question is asked again.
    - A prompter that raises GoBack returns to the previous question it was asked; later answers stay
      remembered. An answer that fails its check is reported to `on_refused` and asked again (without
      `on_refused`, the UsageError propagates: nobody is there to answer again).
    - The system question (key `system`), when in `catalog`, loads the machine every later question uses.
    """
    remembered = {} if remembered is None else remembered
    result = Walk(system=system)
    decided: dict[int, tuple[Question, bool]] = {}
    history: list[int] = []  # indices of the questions asked of the prompter, for GoBack
    index = 0
    while index < len(catalog):
        question = catalog[index]
        machine = result.system
        applies = True if question.key == SYSTEM_KEY else question.when(result.answers, machine)  # type: ignore[arg-type]
        decided[index] = (question, applies)
        if not applies:
            if question.key in preset:
                result.ignored.append(question.key)
            index += 1
            continue
        choices = () if question.key == SYSTEM_KEY else question.resolve_choices(result.answers, machine)  # type: ignore[arg-type]

        def check(raw: Any, question: Question = question, choices: Sequence[Choice] = choices) -> Any:
            return finish(question, raw, choices, result.answers, result.system)

        if question.key in preset:
            _store(result, question, check(preset[question.key]))
            index += 1
            continue
        if question.key in keep:
            try:
                _store(result, question, check(keep[question.key]))
                index += 1
                continue
            except (UsageError, InputError):
                pass  # no longer valid here: ask it
        ahead = {key: preset[key] for key in LOOKAHEAD if key in preset and key not in result.answers}
        default = _default(question, choices, {**remembered, **keep}, result, check, ahead)
        note = question.explain({**ahead, **result.answers}, machine) if question.explain else None  # type: ignore[arg-type]
        try:
            raw = prompter.ask(question, default=default, choices=choices, note=note, check=check)
            value = check(raw)
        except GoBack:
            if history:
                index = history.pop()
                for later in [k for k in result.answers if k not in _keys_before(catalog, index)]:
                    del result.answers[later]
                result.asked = result.asked[: len(history)]
                decided = {i: d for i, d in decided.items() if i < index}
            continue
        except (UsageError, InputError) as exc:
            if on_refused is None:
                raise
            on_refused(question, exc)
            continue
        _store(result, question, value)
        remembered[question.key] = value
        history.append(index)
        result.asked.append(question.key)
        index += 1
    result.decisions = [decided[i] for i in sorted(decided)]
    result.ignored = list(dict.fromkeys(result.ignored))  # a question passed twice (after going back) once
    return result


def _keys_before(catalog: Sequence[Question], index: int) -> set[str]:
    return {q.key for q in catalog[:index]}


def _store(result: Walk, question: Question, value: Any) -> None:
    result.answers[question.key] = value
    if question.key == SYSTEM_KEY:
        result.system_spec = value or "local"
        result.system = load_machine(result.system_spec)


def load_machine(spec: str) -> MachineProfile:
    """The profile for a system spec; `local` and presets are loaded once per process (a probe takes a moment),
    a profile file every time (it may change between two walks)."""
    from accelwiz.probe.presets import find_preset
    from accelwiz.probe.profiles import load_system

    cacheable = spec.strip().lower() == "local" or find_preset(spec) is not None
    if not cacheable:
        return load_system(spec)
    if spec not in _MACHINES:
        _MACHINES[spec] = load_system(spec)
    return _MACHINES[spec]


_MACHINES: dict[str, MachineProfile] = {}


# Answers given up front (options, answer files) for later questions that an earlier default honours: with
# --precision fp8 the strategy default is one that can carry fp8 (not DeepSpeed), where one fits.
LOOKAHEAD = ("precision",)


def _default(question: Question, choices: Sequence[Choice], remembered: Mapping[str, Any], result: Walk,
             check: Callable[[Any], Any], ahead: Mapping[str, Any] = MappingProxyType({})) -> Any:
    """The remembered answer where it is still valid here, else the computed default (seeing `ahead`: answers
    given up front for later questions)."""
    if question.key in remembered:
        try:
            return check(remembered[question.key])
        except (UsageError, InputError):
            pass
    if question.key == SYSTEM_KEY:
        return question.default
    return question.resolve_default({**ahead, **result.answers}, result.system)  # type: ignore[arg-type]


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
    data = {key: value for key, value in answers.items()
            if value is not None and value != "" and key != SYSTEM_KEY}
    data.setdefault("gpus", system.gpu_count)
    if not data["gpus"] and "strategy" not in data and int(data.get("processes") or 1) * int(
            data.get("num_machines") or 1) > 1:
        data["strategy"] = "ddp"  # several CPU processes: DDP on gloo (the strategy question is for GPUs)
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
        return _PARSERS[question.kind](question, raw, choices)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{question.key}: {exc}", hint=question.help) from None


def finish(question: Question, raw: Any, choices: Sequence[Choice], answers: Mapping[str, Any],
           system: MachineProfile | None) -> Any:
    """Parse an answer and check it against the answers so far: where it is given, not after the last question."""
    try:
        value = parse_answer(question, raw, choices)
    except UsageError:
        if question.refuse is not None and system is not None:
            question.refuse(raw, answers, system)  # raises the specific reason, if it has one
        raise
    if question.verify is not None and value not in ("", None):
        question.verify(value, answers, system)  # type: ignore[arg-type]
    return value


def _spelling(text: Any) -> str:
    """Answer files may write `node_commands` or `node-commands`, `FSDP-HYBRID` or `fsdp_hybrid` (old words:
    wizard/aliases.py)."""
    return str(text).strip().lower().replace("_", "-")


def _select(question: Question, raw: Any, choices: Sequence[Choice]) -> Any:
    for choice in choices:
        value = getattr(choice.value, "value", choice.value)
        if raw == choice.value or _spelling(raw) == _spelling(value):
            return choice.value
    valid = ", ".join(str(getattr(c.value, "value", c.value)) for c in choices)
    close = difflib.get_close_matches(_spelling(raw), [_spelling(getattr(c.value, "value", c.value)) for c in choices],
                                      n=1, cutoff=0.5)
    raise ValueError(f"{raw!r} is not one of the choices here: {valid}"
                     + (f" (did you mean {close[0]}?)" if close else ""))


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
