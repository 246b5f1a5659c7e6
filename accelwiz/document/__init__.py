"""Config files as data plus the line and column of every key, so findings can point at their place.

The readers (`load_document`, `parse_text`, `detect_kind`) import PyYAML and the JSON reader; they are loaded on
first use, so a command that only needs the bounded file reads of `accelwiz.document.read` (`estimate` with a
preset, through accelwiz.atomic) does not import YAML (about 10 ms; issue 33).
"""

from typing import Any

from accelwiz.document.model import Document, DocumentKind, KeyPath, Span

__all__ = ["Document", "DocumentKind", "KeyPath", "Span", "detect_kind", "load_document", "parse_text"]
_READERS = ("detect_kind", "load_document", "parse_text")


def __getattr__(name: str) -> Any:
    if name in _READERS:
        from accelwiz.document import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
