"""Config files as data plus the line and column of every key, so findings can point at their place."""

from accelwiz.document.load import detect_kind, load_document, parse_text
from accelwiz.document.model import Document, DocumentKind, KeyPath, Span

__all__ = ["Document", "DocumentKind", "KeyPath", "Span", "detect_kind", "load_document", "parse_text"]
