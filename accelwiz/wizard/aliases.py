"""Old answer spellings that keep working: a renamed value is read as the vocabulary's word (accelwiz/vocab.py),
with one deprecation note that names the new spelling to write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.vocab import LAUNCHER_KINDS, RENAMED_LAUNCHERS, RENAMED_STRATEGIES, STRATEGY_KINDS

# answer key -> (the vocabulary's words, old word -> new word)
RENAMED_ANSWERS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "strategy": (STRATEGY_KINDS, RENAMED_STRATEGIES),
    "launcher": (LAUNCHER_KINDS, RENAMED_LAUNCHERS),
}


def renamed(answers: Mapping[str, Any], *, where: str) -> tuple[dict[str, Any], list[str]]:
    """`answers` with each old spelling replaced by the vocabulary's word, and one note per replacement.
    `where` says how the user wrote them: an answer file's path, or "option" for `init --strategy`."""
    result, notes = dict(answers), []
    for key, (words, table) in RENAMED_ANSWERS.items():
        raw = answers.get(key)
        new = _new_word(raw, words, table) if isinstance(raw, str) else None
        if new is None:
            continue
        result[key] = new
        given, wanted = (f"--{key} {raw}", f"--{key} {new}") if where == "option" else \
            (f"{where}: `{key}: {raw}`", f"`{key}: {new}`")
        notes.append(f"{given} is the old spelling of {wanted}; read as {new}: write that, the old spelling is "
                     "deprecated")
    return result, notes


def _new_word(raw: str, words: tuple[str, ...], table: Mapping[str, str]) -> str | None:
    """The new word for an old spelling (in any case, `_` or `-`), None for a current word or anything else (which
    the question's own parser accepts or refuses)."""
    text = raw.strip().lower()
    if text in words:
        return None
    return table.get(text) or table.get(text.replace("_", "-"))
