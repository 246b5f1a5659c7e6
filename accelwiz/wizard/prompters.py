"""Where answers come from: a terminal (questionary), a mapping (tests, --answers), or the defaults."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from accelwiz.errors import UsageError
from accelwiz.wizard.catalog_types import Choice, Question
from accelwiz.wizard.flow import parse_answer


class DefaultsPrompter:
    """`--defaults`: accept every default; a question without one is a usage error, never a hang."""

    def __init__(self, log: TextIO | None = None) -> None:
        self.log = log

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        if default is None:
            raise UsageError(
                f"`{question.key}` has no default and no answer was given",
                hint=f"pass it in an --answers file ({question.key}: ...): {question.help}",
            )
        if self.log is not None:
            shown = next((c.label for c in choices if c.value == default), getattr(default, "value", default))
            self.log.write(f"{question.prompt} {shown}" + (f"  ({note})" if note else "") + "\n")
        return default


class ScriptedPrompter:
    """Answers from a mapping (tests). A question missing from it is a usage error."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = dict(answers)
        self.asked: list[str] = []

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        self.asked.append(question.key)
        if question.key not in self.answers:
            raise UsageError(
                f"no scripted answer for `{question.key}` ({question.prompt})",
                hint="add it to the answers, or use --defaults to accept the rest",
            )
        return parse_answer(question, self.answers[question.key], choices)


class QuestionaryPrompter:
    """Arrow-key selects, y/n confirms and validated text on a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        import questionary

        self.stream.write(f"\n  {question.help}\n" + (f"  {note}\n" if note else ""))
        self.stream.flush()
        prompt = _build(questionary, question, default, choices)
        # unsafe_ask: Ctrl-C raises KeyboardInterrupt (ask() would swallow it and return None); EOF comes
        # through prompt_toolkit as EOFError, which is the same "cancelled" to the caller.
        try:
            value = prompt.unsafe_ask()
        except EOFError:
            raise KeyboardInterrupt from None
        if question.kind in ("int", "float", "text", "path"):
            if not value.strip() and default is not None:
                return default  # Enter on an empty line keeps the default shown in brackets
            return parse_answer(question, value, choices)
        return value


def _build(questionary: Any, question: Question, default: Any, choices: Sequence[Choice]) -> Any:
    if question.kind == "select":
        items = [questionary.Choice(c.label, value=c.value) for c in choices]
        selected = next((item for item in items if item.value == default), None)
        return questionary.select(question.prompt, choices=items, default=selected)
    if question.kind == "confirm":
        return questionary.confirm(question.prompt, default=bool(default))  # it shows (Y/n) or (y/N) itself
    # The default is shown, not pre-filled: typing replaces it and Enter keeps it. (Pre-filled editable text
    # turns "4096" typed after a default of 2048 into 20484096.)
    shown = "" if default is None else str(getattr(default, "value", default))
    message = f"{question.prompt} [{shown}]" if shown else question.prompt
    factory = questionary.path if question.kind == "path" else questionary.text
    return factory(message, validate=_validator(question, choices, has_default=default is not None))


def _validator(question: Question, choices: Sequence[Choice], *, has_default: bool) -> Any:
    def check(text: str) -> bool | str:
        if not text.strip():
            if has_default:
                return True  # Enter keeps the default
            if question.kind in ("text", "path") and question.default is None:
                return "an answer is needed"
        try:
            parse_answer(question, text, choices)
        except UsageError as exc:
            return exc.message
        return True

    return check


class NoTerminalPrompter:
    """Standard input is not a terminal and the answers ran out: fail clearly instead of waiting forever."""

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        raise UsageError(
            f"no terminal to ask `{question.key}` ({question.prompt})",
            hint="pass --defaults to accept the defaults, or give it in --answers FILE "
            f"({question.key}: ...)",
        )


class RememberingPrompter:
    """Asks through another prompter with the previous answers as defaults (going back after a refusal)."""

    def __init__(self, inner: Any, previous: Mapping[str, Any]) -> None:
        self.inner = inner
        self.previous = dict(previous)

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None) -> Any:
        remembered = self.previous.get(question.key, default)
        if choices and all(choice.value != remembered for choice in choices):
            remembered = default  # an earlier choice that this branch no longer offers
        return self.inner.ask(question, default=remembered, choices=choices, note=note)
