"""Training data: a text file, JSONL (`text` or chat `messages` per line) or a `datasets` save_to_disk directory,
tokenized with the model's tokenizer (or as bytes for the randomly initialised presets) and packed into
fixed-length sequences.

Byte-level tokens keep the no-download path honest (real text, a real next-token loss that falls as the model
learns). The bundled corpus is public-domain verse in `data/*.txt`. Reading and validating the records needs no
torch: `accelwiz run` refuses a malformed line, by file and line number, before launching anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

BUNDLED_CORPUS_DIR = Path(__file__).parent / "data"
JSONL_SUFFIXES = (".jsonl", ".json")


class DataError(ValueError):
    """The training data is missing, malformed or too short for one sequence; `hint` says what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


# A record is either {"text": str} or {"messages": [{"role": ..., "content": ...}, ...]}.
Record = dict[str, Any]


def data_kind(path: Path | None) -> str:
    if path is None:
        return "bundled"
    if path.is_dir():
        return "dataset"
    return "jsonl" if path.suffix.lower() in JSONL_SUFFIXES else "text"


SAMPLE_BYTES = 1 << 20  # what the preflight reads of --data: enough records to judge the file, never all of it


def load_text(path: Path | None) -> bytes:
    """The bytes of `path`, or of every bundled `data/*.txt` (sorted, so runs are reproducible)."""
    if path is not None:
        with _open_data(path) as stream:
            return stream.read()
    files = sorted(BUNDLED_CORPUS_DIR.glob("*.txt"))
    if not files:
        raise DataError(f"the bundled corpus is missing: no *.txt in {BUNDLED_CORPUS_DIR}")
    return b"\n".join(f.read_bytes() for f in files)


def load_records(path: Path | None) -> list[Record]:
    """Every training record of `--data`; a text file (or the bundled corpus) is one record."""
    kind = data_kind(path)
    if kind in ("bundled", "text"):
        return [{"text": load_text(path).decode("utf-8", errors="replace")}]
    assert path is not None
    if kind == "jsonl":
        return read_jsonl(path)
    return read_dataset(path)


def sample_records(path: Path | None) -> list[Record]:
    """What the preflight reads of `--data` before the launch: a regular file (never a FIFO, /dev/zero or
    another device: refused before a byte is read) and the records of its first SAMPLE_BYTES (a 7 GiB file is
    judged by its first MiB, the workers read it all). A text file is one record of its first MiB; a dataset
    directory is read by `datasets` (memory-mapped)."""
    kind = data_kind(path)
    if kind == "bundled":
        return []
    assert path is not None
    if kind == "text":
        with _open_data(path) as stream:
            return [{"text": stream.read(SAMPLE_BYTES).decode("utf-8", errors="replace")}]
    if kind == "jsonl":
        return jsonl_records(path, check_record, example='{"text": "..."}', max_bytes=SAMPLE_BYTES)
    return read_dataset(path)


def read_jsonl(path: Path) -> list[Record]:
    """One record per non-blank line; a line that is not a JSON object with `text` or `messages` is named."""
    return jsonl_records(path, check_record, example='{"text": "..."}')


def jsonl_records(path: Path, check: Callable[[Any, str], Any], *, example: str,
                  max_bytes: int | None = None) -> list[Any]:
    """Every non-blank line of a JSONL file through `check(item, "path:line")`; a DataError names the first line
    that is not JSON (or that `check` refuses), a file that cannot be read, or one with no record at all.
    `max_bytes`: a sample, the lines that start within the first max_bytes (each read whole, up to
    MAX_LINE_BYTES)."""
    records = []
    for number, line in _lines(path, max_bytes):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})",
                            hint="write one JSON object per line") from None
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting deeper than json's stack
            raise DataError(f"{path}:{number}: not readable JSON ({type(exc).__name__})",
                            hint="write one JSON object per line") from None
        records.append(check(item, f"{path}:{number}"))
    if not records:
        raise DataError(f"{path}: no records (every line is blank)", hint=f"write one object per line, e.g. {example}")
    return records


MAX_LINE_BYTES = 64 * 1024 * 1024


def _lines(path: Path, max_bytes: int | None) -> Iterator[tuple[int, str]]:
    """(number, text) of each line, decoded as UTF-8, streamed: the file is never held whole, a line is at most
    MAX_LINE_BYTES, and with `max_bytes` reading stops after the line that reaches it."""
    read = 0
    with _open_data(path) as stream:
        for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), start=1):
            read += len(raw)
            if len(raw) > MAX_LINE_BYTES:
                raise DataError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES // 2**20} MiB",
                                hint="write one JSON object per line")
            try:
                yield number, raw.decode("utf-8").removeprefix("\ufeff" if number == 1 else "")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{number}: not UTF-8 text (byte {exc.start} of the line)",
                                hint="save the file as UTF-8") from None
            if max_bytes is not None and read >= max_bytes:
                return


def _open_data(path: Path) -> BinaryIO:
    """--data opened by the bounded reader's rules: a regular file, or one line naming what it is instead."""
    from accelwiz.document.read import open_regular
    from accelwiz.errors import InputError

    try:
        return open_regular(path, what="a text or JSONL file of training records")
    except InputError as exc:
        raise DataError(f"--data {exc.message}", hint=exc.hint or "check the path") from None


def check_record(item: Any, where: str) -> Record:
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return {"text": item["text"]}
    if isinstance(item, dict) and is_messages(item.get("messages")):
        return {"messages": item["messages"]}
    shape = f"keys {', '.join(map(str, item))}" if isinstance(item, dict) and item else type(item).__name__
    raise DataError(f"{where}: has neither a `text` string nor a `messages` list (found {shape})",
                    hint='write {"text": "..."} or {"messages": [{"role": "user", "content": "..."}, ...]}')


def is_messages(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                    for m in value))


def read_dataset(path: Path) -> list[Record]:
    """A `datasets` dataset saved with save_to_disk (a DatasetDict gives its `train` split, else its first)."""
    try:
        from datasets import DatasetDict, load_from_disk
    except ImportError:
        raise DataError(f"--data {path} is a directory, and the `datasets` library is not installed",
                        hint="pip install 'accelwiz[train]', or pass a text or JSONL file") from None
    try:
        dataset = load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise DataError(f"--data {path} is not a dataset saved with save_to_disk ({str(exc).splitlines()[0]})",
                        hint="save it with dataset.save_to_disk(directory), or pass a text or JSONL file") from None
    if isinstance(dataset, DatasetDict):
        dataset = dataset["train"] if "train" in dataset else dataset[next(iter(dataset))]
    column = next((c for c in ("text", "messages") if c in dataset.column_names), None)
    if column is None:
        raise DataError(f"--data {path}: the dataset has neither a `text` nor a `messages` column "
                        f"(columns: {', '.join(dataset.column_names)})", hint="rename the column to `text`")
    return [check_record({column: value}, f"{path} row {row}") for row, value in enumerate(dataset[column])]


def record_text(record: Record, tokenizer: Any) -> str:
    """The text a record trains on: chat messages through the tokenizer's chat template."""
    if "text" in record:
        return record["text"]
    if tokenizer is None:
        raise DataError("chat `messages` need a tokenizer with a chat template; the byte-level presets have none",
                        hint="pass a pretrained checkpoint with --model, or records with a `text` field")
    if not getattr(tokenizer, "chat_template", None):
        raise DataError("chat `messages` need a chat template, and the model's tokenizer has none",
                        hint="set tokenizer.chat_template and save it, or use records with a `text` field")
    return tokenizer.apply_chat_template(record["messages"], tokenize=False)


def token_ids(records: list[Record], tokenizer: Any) -> list[int]:
    """All records as one stream of token ids, each followed by the end-of-sequence token (bytes: a newline)."""
    ids: list[int] = []
    for record in records:
        text = record_text(record, tokenizer)
        if tokenizer is None:
            ids.extend(text.encode("utf-8"))
            ids.append(ord("\n"))
            continue
        ids.extend(tokenizer(text, add_special_tokens=False)["input_ids"])
        if tokenizer.eos_token_id is not None:
            ids.append(tokenizer.eos_token_id)
    return ids


def pack(ids: list[int], seq_len: int):  # noqa: ANN201 - returns a torch tensor; torch is imported here
    """A LongTensor [n, seq_len] of non-overlapping windows of the stream; the tail shorter than one is dropped."""
    import torch

    count = len(ids) // seq_len
    if count == 0:
        raise DataError(f"the training data has {len(ids)} tokens, fewer than one sequence of --seq-len {seq_len}",
                        hint="use more data or a smaller --seq-len")
    return torch.tensor(ids[: count * seq_len], dtype=torch.long).view(count, seq_len)


def byte_sequences(text: bytes, seq_len: int):  # noqa: ANN201 - returns a torch tensor; torch is imported here
    """A LongTensor [n, seq_len] of non-overlapping byte windows; the tail shorter than one window is dropped."""
    import torch

    count = len(text) // seq_len
    if count == 0:
        raise DataError(f"the training text has {len(text)} bytes, fewer than one sequence of --seq-len {seq_len}")
    flat = torch.frombuffer(bytearray(text[: count * seq_len]), dtype=torch.uint8)
    return flat.view(count, seq_len).long()


def training_sequences(path: Path | None, tokenizer: Any, seq_len: int):  # noqa: ANN201 - a torch tensor
    """`--data` read, tokenized and packed: what the DataLoader serves."""
    if tokenizer is None and data_kind(path) in ("bundled", "text"):
        return byte_sequences(load_text(path), seq_len)  # the exact bytes, as before
    return pack(token_ids(load_records(path), tokenizer), seq_len)
