"""The datasets TRL's trainers read, checked line by line before a model is loaded.

DPO: one preference per line, `prompt`, `chosen` and `rejected` (strings, or chat message lists: TRL's
"conversational" form). GRPO: one `prompt` per line; other columns are handed to the reward functions as keyword
arguments (TRL's reward signature). The first line without what the kind needs is named (exit 2), and so is the
first whose column has another type than an earlier line's: `datasets.Dataset.from_list` (Arrow) takes one type
per column and would fail in every worker after the launch ("Expected bytes, got a 'list' object"), and takes
its columns from the first record, silently dropping one that first appears later (a reward's keyword argument).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError, UsageError
from accelwiz.trainer.data import SAMPLE_BYTES, DataError, is_messages, jsonl_records

if TYPE_CHECKING:
    from accelwiz.resolution.posttraining import ResolvedPostTraining

COLUMNS = {"dpo": ("prompt", "chosen", "rejected"), "grpo": ("prompt",)}
_EXAMPLE = {"dpo": '{"prompt": "...", "chosen": "...", "rejected": "..."}', "grpo": '{"prompt": "..."}'}


def read_trl_records(path: Path | None, kind: str, *, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every record of the JSONL `path` for `kind` (dpo, grpo), or a DataError naming the first bad line.
    `max_bytes`: only the lines that start within the first max_bytes (the preflight's sample, as for SFT data);
    the file is a regular file either way (a FIFO or a device refused unread: data._open_data)."""
    if path is None:
        raise DataError(f"--kind {kind} needs --data: a JSONL file with {', '.join(COLUMNS[kind])} per line",
                        hint=f"write one object per line, e.g. {_EXAMPLE[kind]}")
    first: dict[str, tuple[str, str]] = {}  # column -> (the type its first value had, on which line)
    columns: list[tuple[str, ...]] = []  # the first record's keys, on which line

    def check(item: Any, where: str) -> dict[str, Any]:
        record = _same_types(_checked(item, kind, where), where, first)
        if not columns:
            columns.append((f"line {where.rpartition(':')[2]}", *record))
        dropped = [c for c in record if c not in columns[0][1:]]
        if dropped:  # Dataset.from_list: "the keys of the first entry will be used to determine the columns"
            raise DataError(f"{where}: `{'`, `'.join(dropped)}` not on the first record ({columns[0][0]}); the "
                            "dataset takes its columns from the first record and would drop it",
                            hint="give every column on the first line (null where a line has no value)")
        return record

    return jsonl_records(path, check, example=_EXAMPLE[kind], max_bytes=max_bytes)


def _same_types(record: dict[str, Any], where: str, first: dict[str, tuple[str, str]]) -> dict[str, Any]:
    for column, value in record.items():
        found = _type_of(value)
        if found is None:
            continue  # null: Arrow fills a missing value of any type
        seen, line = first.setdefault(column, (found, f"line {where.rpartition(':')[2]}"))
        if seen != found:
            raise DataError(f"{where}: `{column}` is {found} where {line} has {seen}; the dataset takes one type "
                            "per column", hint=f"write `{column}` the same way on every line")
    return record


def _type_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"  # Arrow widens int64 to float64
    if is_messages(value):
        return "a messages list"
    return {str: "a string", dict: "an object"}.get(type(value), f"a {type(value).__name__}")


def _checked(item: Any, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise DataError(f"{where}: a {type(item).__name__}, not a JSON object", hint=f"write e.g. {_EXAMPLE[kind]}")
    missing = [c for c in COLUMNS[kind] if c not in item]
    bad = [c for c in COLUMNS[kind] if c in item and not _text_or_messages(item[c])]
    if missing or bad:
        found = ", ".join(map(str, item)) or "none"
        what = (f"no `{'`, `'.join(missing)}`" if missing else "") + ("; " if missing and bad else "") + (
            f"`{'`, `'.join(bad)}` neither a non-empty string nor a messages list" if bad else "")
        raise DataError(f"{where}: {what} for --kind {kind} (keys: {found})", hint=f"write e.g. {_EXAMPLE[kind]}")
    return item


def _text_or_messages(value: Any) -> bool:
    return (isinstance(value, str) and bool(value)) or is_messages(value)


def check_trl_inputs(data: Path | None, post: ResolvedPostTraining, model: Any) -> None:
    """What a DPO/GRPO run reads, refused in one line (InputError/UsageError, exit 2) before anything loads:
    `accelwiz run` calls it through trainer/inputs.check_inputs before the launch, each worker again."""
    kind = post.kind.value
    if not model.pretrained:
        raise UsageError(f"--kind {kind} ({post.kind.source}) trains a pretrained checkpoint with a tokenizer, and "
                         f"--model {model.name!r} is a random initialisation",
                         hint="pass a checkpoint directory or hub id with --model")
    trl_records(data, kind, sample=True)  # the first MiB, as `--data` for SFT: a 7 GiB file is not read whole
    reward_of(post, load=False)  # parsed, never imported before the launch (trainer/rewards.py)


def trl_records(data: Path | None, kind: str, *, sample: bool = False) -> list[dict[str, Any]]:
    """The run's records (an InputError naming the first bad line); `sample`: those of the first SAMPLE_BYTES
    only (the preflight before the launch; the workers read the file whole and judge the rest)."""
    try:
        return read_trl_records(data, kind, max_bytes=SAMPLE_BYTES if sample else None)
    except DataError as exc:
        raise InputError(str(exc), hint=exc.hint or None) from None


def reward_of(post: ResolvedPostTraining, *, load: bool = True) -> Any:
    """GRPO's reward function (--reward, or the plan's training.reward); None for DPO. `load=False` checks the
    spec without importing the file (the preflight, before the launch)."""
    if post.kind.value != "grpo":
        return None
    from accelwiz.trainer.rewards import find_reward, load_reward

    if not post.reward.value:
        raise UsageError("--kind grpo needs --reward FILE.py:FUNCTION (or training.reward in the plan)",
                         hint="a function def NAME(completions, **kwargs) -> list[float]")
    return load_reward(post.reward.value) if load else find_reward(post.reward.value)

