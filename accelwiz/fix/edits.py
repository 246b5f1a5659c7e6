"""What a fix does to a file, as data: set a value, rename a key, delete a key, add a key.

The editors (yaml_edit.py, json_edit.py) apply them without re-dumping the file: YAML through ruamel.yaml's
round trip (comments, key order, quoting and blank lines kept), JSON by replacing only the bytes of the keys and
values touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from accelwiz.document import KeyPath

Quote = Literal["plain", "single", "double"]


@dataclass(frozen=True)
class SetValue:
    path: KeyPath
    value: Any
    quote: Quote = "plain"  # YAML: how a string is written ("single" keeps `'NO'` a string)


@dataclass(frozen=True)
class RenameKey:
    path: KeyPath
    new_name: str


@dataclass(frozen=True)
class DeleteKey:
    path: KeyPath
    keep_last: bool = False  # a key written twice: delete every occurrence but the last (the one the readers keep)


@dataclass(frozen=True)
class AddKey:
    """Add `key` to the mapping at `parent` (after its last key); nothing when the key is already there."""

    parent: KeyPath
    key: str
    value: Any


Edit = SetValue | RenameKey | DeleteKey | AddKey


class EditError(Exception):
    """An edit that cannot be applied to this text (the key moved, the file changed shape)."""
