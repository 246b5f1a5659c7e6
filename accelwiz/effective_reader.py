"""Typed, defensive reads from one config document, as the effective values (effective.py) take them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.effective_value import UNSET, EffectiveValue, Role, Source

if TYPE_CHECKING:
    from accelwiz.document import Document, KeyPath


class DocumentReader:
    """Typed, defensive reads from one document: a value the libraries cannot read is "unset"."""

    def __init__(self, document: Document | None, role: Role) -> None:
        self.document, self.role = document, role

    def raw(self, *path: str) -> Any:
        return self.document.get(*path) if self.document is not None else None

    def has(self, *path: str) -> bool:
        return self.document is not None and self.document.has(*path)

    def value(self, *path: str, read: Any, exact: Any = None, default: EffectiveValue = UNSET) -> EffectiveValue:
        """The value at `path` as `read` reads it; `exact` says whether the written value has the schema's type
        (default: whether reading kept it unchanged)."""
        if not self.has(*path):
            return default
        return self.at(tuple(path), self.raw(*path), read=read, exact=exact)

    def at(self, path: KeyPath, raw: Any, *, read: Any, exact: Any = None) -> EffectiveValue:
        converted = read(raw)
        source: Source = "yaml" if self.role == "accelerate" else "json"
        if converted is None:
            return EffectiveValue(None, "unset", self.role, path, note=f"written as {raw!r}", written=raw,
                                  invalid=True)
        valid = exact(raw) if exact is not None else (type(converted) is type(raw) and converted == raw)
        return EffectiveValue(converted, source, self.role, path, written=raw, invalid=not valid)
