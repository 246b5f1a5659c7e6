"""One answer, typed or written in a file, turned into its question's value: a choice (in any case, `_` or `-`),
yes/no, a whole number, a number or text; then checked against the answers so far (the question's verify, and its
refuse for the reason a value is not offered)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.catalog_types import Choice, Question


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


def same_answer(raw: Any, used: Any) -> bool:
    """Whether an answer as written (`true`, `2`, `bf16`) is the value the config uses."""
    parse = {bool: _confirm, int: _int, float: _float}.get(type(used))
    try:
        given = parse(None, raw, ()) if parse else str(raw).strip().lower()  # type: ignore[arg-type]
        return given == getattr(used, "value", used)
    except (TypeError, ValueError):
        return False
