"""Training data: a text file cut into fixed-length byte sequences (no tokenizer to download).

Byte-level tokens keep the pipeline honest (real text, a real next-token loss that falls as the model learns)
without any network access. The bundled corpus is public-domain verse in `data/*.txt`.
"""

from __future__ import annotations

from pathlib import Path

BUNDLED_CORPUS_DIR = Path(__file__).parent / "data"


class DataError(ValueError):
    """The training text is missing or too short for one sequence."""


def load_text(path: Path | None) -> bytes:
    """The bytes of `path`, or of every bundled `data/*.txt` (sorted, so runs are reproducible)."""
    if path is not None:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise DataError(f"cannot read --data {path}: {exc.strerror or exc}") from None
    files = sorted(BUNDLED_CORPUS_DIR.glob("*.txt"))
    if not files:
        raise DataError(f"the bundled corpus is missing: no *.txt in {BUNDLED_CORPUS_DIR}")
    return b"\n".join(f.read_bytes() for f in files)


def byte_sequences(text: bytes, seq_len: int):  # noqa: ANN201 - returns a torch tensor; torch is imported here
    """A LongTensor [n, seq_len] of non-overlapping windows; the tail shorter than one window is dropped."""
    import torch

    count = len(text) // seq_len
    if count == 0:
        raise DataError(f"the training text has {len(text)} bytes, fewer than one sequence of --seq-len {seq_len}")
    flat = torch.frombuffer(bytearray(text[: count * seq_len]), dtype=torch.uint8)
    return flat.view(count, seq_len).long()
