"""The datasets TRL's trainers read, checked line by line before a model is loaded.

DPO: one preference per line, `prompt`, `chosen` and `rejected` (strings, or chat message lists: TRL's
"conversational" form). GRPO: one `prompt` per line; other columns are handed to the reward functions as keyword
arguments (TRL's reward signature). The first line without what the kind needs is named (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelwiz.trainer.data import DataError, _is_messages

COLUMNS = {"dpo": ("prompt", "chosen", "rejected"), "grpo": ("prompt",)}
_EXAMPLE = {"dpo": '{"prompt": "...", "chosen": "...", "rejected": "..."}', "grpo": '{"prompt": "..."}'}


def read_trl_records(path: Path | None, kind: str) -> list[dict[str, Any]]:
    """Every record of the JSONL `path` for `kind` (dpo, grpo), or a DataError naming the first bad line."""
    if path is None:
        raise DataError(f"--kind {kind} needs --data: a JSONL file with {', '.join(COLUMNS[kind])} per line",
                        hint=f"write one object per line, e.g. {_EXAMPLE[kind]}")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"cannot read --data {path}: {exc.strerror or exc}", hint="check the path") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start})", hint="save the file as UTF-8") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})",
                            hint="write one JSON object per line") from None
        records.append(_checked(item, kind, f"{path}:{number}"))
    if not records:
        raise DataError(f"{path}: no records (every line is blank)", hint=f"write e.g. {_EXAMPLE[kind]}")
    return records


def _checked(item: Any, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise DataError(f"{where}: a {type(item).__name__}, not a JSON object", hint=f"write e.g. {_EXAMPLE[kind]}")
    missing = [c for c in COLUMNS[kind] if c not in item]
    bad = [c for c in COLUMNS[kind] if c in item and not _text_or_messages(item[c])]
    if missing or bad:
        found = ", ".join(map(str, item)) or "none"
        what = (f"no `{'`, `'.join(missing)}`" if missing else "") + ("; " if missing and bad else "") + (
            f"`{'`, `'.join(bad)}` neither a string nor a messages list" if bad else "")
        raise DataError(f"{where}: {what} for --kind {kind} (keys: {found})", hint=f"write e.g. {_EXAMPLE[kind]}")
    return item


def _text_or_messages(value: Any) -> bool:
    return (isinstance(value, str) and bool(value)) or _is_messages(value)
