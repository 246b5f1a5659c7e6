"""The one loop that walks the catalog: ask each applicable question not already answered, then validate."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from pydantic import ValidationError

from accelwiz.errors import InputError, UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answer_parsing import finish, same_answer
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
    state = _Walking(catalog, Walk(system=system))
    while state.index < len(catalog):
        question = catalog[state.index]
        if not state.applies(question, preset):
            continue
        choices = () if question.key == SYSTEM_KEY else \
            question.resolve_choices(state.result.answers, state.result.system)  # type: ignore[arg-type]

        def check(raw: Any, question: Question = question, choices: Sequence[Choice] = choices) -> Any:
            return finish(question, raw, choices, state.result.answers, state.result.system)

        if _given(state, question, check, preset, keep):
            continue
        default, note = _offer(question, choices, check, state.result, preset, {**remembered, **keep})
        try:
            value = check(prompter.ask(question, default=default, choices=choices, note=note, check=check))
        except GoBack:
            state.back()
            continue
        except (UsageError, InputError) as exc:
            if on_refused is None:
                raise
            on_refused(question, exc)
            continue
        state.answered(question, value)
        remembered[question.key] = value
    return state.finished()


@dataclass
class _Walking:
    """Where a walk is: the next question's index, whether each question so far applied, and the questions asked
    of the prompter (GoBack returns to the last of them)."""

    catalog: Sequence[Question]
    result: Walk
    index: int = 0
    decided: dict[int, tuple[Question, bool]] = field(default_factory=dict)
    history: list[int] = field(default_factory=list)

    def applies(self, question: Question, preset: Mapping[str, Any]) -> bool:
        """Whether the question applies to the answers so far; one that does not is passed (an answer given up
        front for it is noted as ignored)."""
        answers, machine = self.result.answers, self.result.system
        applies = True if question.key == SYSTEM_KEY else question.when(answers, machine)  # type: ignore[arg-type]
        self.decided[self.index] = (question, applies)
        if not applies:
            if question.key in preset:
                self.result.ignored.append(question.key)
            self.index += 1
        return applies

    def take(self, question: Question, value: Any) -> None:
        """An answer given without asking (up front, or kept from an earlier walk)."""
        _store(self.result, question, value)
        self.index += 1

    def answered(self, question: Question, value: Any) -> None:
        self.history.append(self.index)
        self.result.asked.append(question.key)
        self.take(question, value)

    def back(self) -> None:
        """To the previous question asked, forgetting the answers after it (they stay remembered)."""
        if not self.history:
            return
        self.index = self.history.pop()
        for later in [k for k in self.result.answers if k not in _keys_before(self.catalog, self.index)]:
            del self.result.answers[later]
        self.result.asked = self.result.asked[: len(self.history)]
        self.decided = {i: d for i, d in self.decided.items() if i < self.index}

    def finished(self) -> Walk:
        self.result.decisions = [self.decided[i] for i in sorted(self.decided)]
        # a question passed twice (after going back) once
        self.result.ignored = list(dict.fromkeys(self.result.ignored))
        return self.result


def _given(state: _Walking, question: Question, check: Callable[[Any], Any], preset: Mapping[str, Any],
           keep: Mapping[str, Any]) -> bool:
    """Take a preset answer (a bad one is an error), or a kept one that still parses and verifies here."""
    if question.key in preset:
        state.take(question, check(preset[question.key]))
        return True
    if question.key in keep:
        try:
            state.take(question, check(keep[question.key]))
            return True
        except (UsageError, InputError):
            pass  # no longer valid here: ask it
    return False


def _offer(question: Question, choices: Sequence[Choice], check: Callable[[Any], Any], result: Walk,
           preset: Mapping[str, Any], remembered: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The default and the note a question is asked with, seeing answers given up front for later questions."""
    ahead = {key: preset[key] for key in LOOKAHEAD if key in preset and key not in result.answers}
    default = _default(question, choices, remembered, result, check, ahead)
    seen = {**ahead, **result.answers}
    note = question.explain(seen, result.system) if question.explain else None  # type: ignore[arg-type]
    return default, note


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
        if used is None or same_answer(preset[key], used):
            continue
        when = next(q.when.__name__ for q, _ in result.decisions if q.key == key)
        raise UsageError(
            f"answer `{key}: {preset[key]}` cannot apply: the question is asked only when `{when}` "
            f"holds, so the config would use {key} `{getattr(used, 'value', used)}`",
            hint=f"remove `{key}` from the answers, or change the answers or the machine (--system) "
            "it depends on",
        )


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
