"""Where answers come from: a terminal (questionary), a mapping (tests, --answers), or the defaults."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from accelwiz.errors import UsageError
from accelwiz.wizard.catalog_types import Choice, Question
from accelwiz.wizard.flow import GoBack

# The key that goes back one question at any prompt (no answer is spelled "<").
BACK_KEY = "<"
NOTHING_BEFORE = "< : no earlier question was asked here, so this one stays (Ctrl-C cancels)"


def spelled(value: Any) -> str:
    """An answer as the files spell it: true/false, enum values, numbers as typed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


class MissingAnswer(UsageError):
    """`--defaults` reached a question that has no default (an address, an NVMe path)."""

    def __init__(self, key: str) -> None:
        from accelwiz.wizard.catalog import question

        super().__init__(f"`{key}` has no default and no answer was given",
                         hint=f"pass it in an --answers file ({key}: ...): {question(key).help}")
        self.key = key


class DefaultsPrompter:
    """`--defaults`: accept every default; a question without one is a usage error, never a hang."""

    def __init__(self, log: TextIO | None = None) -> None:
        self.log = log

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None,
            check: Callable[[Any], Any] | None = None) -> Any:
        if default is None:
            raise MissingAnswer(question.key)
        if self.log is not None:
            self.log.write(f"{question.prompt} {spelled(default)}" + (f"  ({note})" if note else "") + "\n")
        return default


class Tries:
    """Scripted answers to one question, in order: a refused one is followed by the next (the last repeats)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)

    def next(self) -> Any:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


BACK = object()  # a scripted "go back one question"


class ScriptedPrompter:
    """Answers from a mapping (tests). A question missing from it is a usage error. A value may be `Tries(...)`
    (answers given in turn: a refused answer, then another; BACK to go back)."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = dict(answers)
        self.asked: list[str] = []
        self.defaults: dict[str, Any] = {}  # the default each question was shown with, last time asked
        self.shown: dict[str, str | None] = {}  # the explanation shown with it
        self.refusals: list[tuple[str, str]] = []  # (key, message) of each answer refused and asked again

    def refused(self, question: Question, error: UsageError) -> None:
        self.refusals.append((question.key, error.message))

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None,
            check: Callable[[Any], Any] | None = None) -> Any:
        self.asked.append(question.key)
        self.defaults[question.key] = default
        if question.key not in self.answers:
            raise UsageError(
                f"no scripted answer for `{question.key}` ({question.prompt})",
                hint="add it to the answers, or use --defaults to accept the rest",
            )
        answer = self.answers[question.key]
        answer = answer.next() if isinstance(answer, Tries) else answer
        self.shown[question.key] = note
        if answer is BACK:
            raise GoBack
        return default if answer is KEEP else answer


KEEP = object()  # a scripted Enter: keep the default shown


class QuestionaryPrompter:
    """Arrow-key selects, y/n confirms and validated text on a terminal; `<` goes back one question."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.back_from: str | None = None  # the question `<` was pressed at, until the next one is shown

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None,
            check: Callable[[Any], Any] | None = None) -> Any:
        import questionary

        # `<` where no question was asked before (the first one, or the one answer edited from the review) comes
        # back to the same question: say so, or it looks like going back and straight forward again
        stayed = self.back_from == question.key
        self.back_from = None
        self.stream.write(f"\n  {question.help} (< goes back)\n" + (f"  {note}\n" if note else "")
                          + (f"  {NOTHING_BEFORE}\n" if stayed else ""))
        self.stream.flush()
        prompt = _build(questionary, question, default, choices, check)
        _bind_keys(prompt, typed=question.kind in ("int", "float", "text", "path"))
        # unsafe_ask: Ctrl-C raises KeyboardInterrupt (ask() would swallow it and return None); EOF comes
        # through prompt_toolkit as EOFError, which is the same "cancelled" to the caller.
        try:
            value = prompt.unsafe_ask()
        except EOFError:
            raise KeyboardInterrupt from None
        except GoBack:
            self.back_from = question.key
            raise
        if question.kind in ("int", "float", "text", "path") and not value.strip() and default is not None:
            return default  # Enter on an empty line keeps the default shown in brackets
        return value

    def refused(self, question: Question, error: UsageError) -> None:
        self.stream.write(f"error: {error.message}\n" + (f"  hint: {error.hint}\n" if error.hint else ""))


def _bind_keys(prompt: Any, *, typed: bool) -> None:
    """`<` at any prompt leaves it with GoBack (a specific key beats the prompts' catch-all bindings). On a typed
    answer, Enter on a refused one clears it and keeps the reason on screen: left in place, the next keystrokes
    would extend it (`abc` then `2` sends `abc2`), and only Ctrl-U would get out."""
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings

    bindings = KeyBindings()

    @bindings.add(BACK_KEY)
    def _back(event: Any) -> None:
        event.app.exit(exception=GoBack())

    if typed:
        @bindings.add("enter")
        def _accept(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.validate(set_cursor=True):
                buffer.validate_and_handle()
                return
            reason, state = buffer.validation_error, buffer.validation_state
            buffer.reset()  # empties the input (and the error with it) ...
            buffer.validation_error, buffer.validation_state = reason, state  # ... so the toolbar shows the reason

    application = prompt.application
    application.key_bindings = merge_key_bindings([application.key_bindings or KeyBindings(), bindings])


def _build(questionary: Any, question: Question, default: Any, choices: Sequence[Choice],
           check: Callable[[Any], Any] | None) -> Any:
    if question.kind == "select":
        items = [questionary.Choice(c.label, value=c.value) for c in choices]
        selected = next((item for item in items if item.value == default), None)
        return questionary.select(question.prompt, choices=items, default=selected)
    if question.kind == "confirm":
        return questionary.confirm(question.prompt, default=bool(default))  # it shows (Y/n) or (y/N) itself
    # The default is shown, not pre-filled: typing replaces it and Enter keeps it. (Pre-filled editable text
    # turns "4096" typed after a default of 2048 into 20484096.)
    shown = "" if default is None else spelled(default)
    message = f"{question.prompt} [{shown}]" if shown else question.prompt
    factory = questionary.path if question.kind == "path" else questionary.text
    return factory(message, validate=_validator(question, check, has_default=default is not None))


def _validator(question: Question, check: Callable[[Any], Any] | None, *, has_default: bool) -> Any:
    """Refuse a bad answer at its prompt, with the check's message (a typo is asked again, not fatal)."""

    def validate(text: str) -> bool | str:
        if not text.strip():
            return True if has_default else "an answer is needed"
        if check is None:
            return True
        try:
            check(text)
        except UsageError as exc:
            hint = exc.hint or ""
            close = hint[hint.find("did you mean"):].split("?")[0] + "?" if "did you mean" in hint else ""
            return exc.message + (f" ({close})" if close else "")
        except Exception as exc:  # noqa: BLE001 - an InputError (unreadable profile) is shown, not raised
            return getattr(exc, "message", str(exc))
        return True

    return validate


class NoTerminalPrompter:
    """Standard input is not a terminal and the answers ran out: fail clearly instead of waiting forever."""

    def ask(self, question: Question, *, default: Any, choices: Sequence[Choice], note: str | None,
            check: Callable[[Any], Any] | None = None) -> Any:
        raise UsageError(
            f"no terminal to ask `{question.key}` ({question.prompt})",
            hint="pass --defaults to accept the defaults, or give it in --answers FILE "
            f"({question.key}: ...)",
        )
