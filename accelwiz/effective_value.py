"""One effective value (what a run uses, where it comes from) and the reading of a key written with or without
the prefix the launcher adds: the base that accelwiz.effective and accelwiz.effective_settings both build on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from accelwiz.document import Document, KeyPath

Source = Literal["yaml", "json", "plan", "trainer", "command line", "accelerate default", "deepspeed default",
                 "derived", "unset"]
Role = Literal["accelerate", "deepspeed", "plan"]


class _NotWritten:
    def __repr__(self) -> str:
        return "NOT_WRITTEN"


NOT_WRITTEN: Any = _NotWritten()


@dataclass(frozen=True)
class EffectiveValue:
    """One value the run will use: the value, its source, and (when written) the file, key and written value."""

    value: Any
    source: Source
    role: Role | None = None
    path: KeyPath = ()
    note: str = ""
    written: Any = NOT_WRITTEN
    invalid: bool = False  # written with a type the schema refuses (the schema rules report it)

    @property
    def is_set(self) -> bool:
        return self.value is not None

    @property
    def is_written(self) -> bool:
        return self.written is not NOT_WRITTEN

    @property
    def strict(self) -> Any:
        """The value, or None where the written value is invalid: what rules read, to not repeat the schema."""
        return None if self.invalid else self.value


UNSET = EffectiveValue(None, "unset")


def section_entry(document: Document | None, section: str, name: str, prefix: str) -> tuple[KeyPath, Any] | None:
    """(path, written value) of a key of an Accelerate section written with or without the prefix the launcher
    adds (`fsdp_config: {version: 2}` is `fsdp_version`); the last spelling wins, as in the launcher's merge."""
    found = document.section(section) if document is not None else {}
    short = name.removeprefix(prefix)
    hits = [(section, key) for key in found if key in (name, short)]
    return (hits[-1], found[hits[-1][1]]) if hits else None


def fsdp_entry(document: Document | None, name: str) -> tuple[KeyPath, Any] | None:
    """(path, written value) of an `fsdp_config` key, e.g. fsdp_entry(doc, "fsdp_version")."""
    return section_entry(document, "fsdp_config", name, "fsdp_")
