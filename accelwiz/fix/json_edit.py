"""Apply edits to JSON text by replacing only the bytes of the keys and values they touch.

The document loader's reader (accelwiz.document.json_reader, hjson-tolerant) is reused with offsets recorded:
where each key, each value and each `"key": value` member starts and ends. Everything else in the file (spacing,
comments, key order, the other values' spelling such as `5e8`) is left byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from accelwiz.document.json_reader import JsonReader
from accelwiz.fix.edits import AddKey, DeleteKey, Edit, EditError, RenameKey, SetValue


@dataclass(frozen=True)
class _Member:
    key_start: int
    key_end: int
    value_start: int
    value_end: int


class _OffsetReader(JsonReader):
    """JsonReader that also records offsets: members per key path (in order, duplicates kept), value ranges,
    and where each object's closing brace is."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.members: dict[tuple, list[_Member]] = {}
        self.values: dict[tuple, tuple[int, int]] = {}
        self.closing: dict[tuple, int] = {}

    def value(self, path):  # type: ignore[override]
        self.skip_space()
        start = self.pos
        result = super().value(path)
        self.values[path] = (start, self.pos)
        return result

    def obj(self, path):  # type: ignore[override]
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            self.skip_space()
            if self.text.startswith("}", self.pos):
                self.closing[path] = self.pos
                self.pos += 1
                return result
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            key = self.string()
            key_end = self.pos
            key_path = (*path, key)
            self.skip_space()
            if not self.text.startswith(":", self.pos):
                raise self.fail(f"expected ':' after the key {key!r}")
            self.pos += 1
            result[key] = self.value(key_path)
            start, end = self.values[key_path]
            self.members.setdefault(key_path, []).append(_Member(key_start, key_end, start, end))
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")


def _scan(text: str) -> _OffsetReader:
    reader = _OffsetReader(text)
    reader.parse()
    return reader


def _format(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _member(reader: _OffsetReader, path: tuple, *, last: bool = True) -> _Member:
    found = reader.members.get(tuple(path))
    if not found:
        raise EditError(f"`{'.'.join(map(str, path))}` is not in the file")
    return found[-1] if last else found[0]


def _deletion(text: str, member: _Member) -> tuple[int, int]:
    """The range that removes a member with its comma, and its whole line when it is alone on it."""
    end = member.value_end
    probe = end
    while probe < len(text) and text[probe] in " \t":
        probe += 1
    line_start = text.rfind("\n", 0, member.key_start) + 1
    alone = not text[line_start:member.key_start].strip()
    if probe < len(text) and text[probe] == ",":  # a member follows: take the comma after it
        end = probe + 1
        if alone:
            after = end
            while after < len(text) and text[after] in " \t":
                after += 1
            if after < len(text) and text[after] == "\n":
                return line_start, after + 1
        while end < len(text) and text[end] in " \t":
            end += 1
        return member.key_start, end
    # the last member: take the comma before it
    back = member.key_start - 1
    while back >= 0 and text[back] in " \t\r\n":
        back -= 1
    if back >= 0 and text[back] == ",":
        return back, end
    return (line_start if alone else member.key_start), end


def apply_one(text: str, edit: Edit) -> str:
    reader = _scan(text)
    if isinstance(edit, SetValue):
        member = _member(reader, edit.path)
        return text[:member.value_start] + _format(edit.value) + text[member.value_end:]
    if isinstance(edit, RenameKey):
        member = _member(reader, edit.path)
        if (*edit.path[:-1], edit.new_name) in reader.members:
            raise EditError(f"`{edit.new_name}` is already in the file")
        return text[:member.key_start] + _format(edit.new_name) + text[member.key_end:]
    if isinstance(edit, DeleteKey):
        occurrences = reader.members.get(tuple(edit.path), [])
        if not occurrences:
            raise EditError(f"`{'.'.join(map(str, edit.path))}` is not in the file")
        doomed = occurrences[:-1] if edit.keep_last else occurrences
        for member in sorted(doomed, key=lambda m: m.key_start, reverse=True):
            start, end = _deletion(text, member)
            text = text[:start] + text[end:]
        return text
    if isinstance(edit, AddKey):
        parent = tuple(edit.parent)
        if (*parent, edit.key) in reader.members:
            return text
        if parent not in reader.closing:
            raise EditError(f"`{'.'.join(map(str, parent)) or 'the top level'}` is not an object in the file")
        siblings = [m for p, ms in reader.members.items() if p[:-1] == parent and len(p) == len(parent) + 1
                    for m in ms]
        entry = f"{_format(edit.key)}: {_format(edit.value)}"
        if not siblings:
            close = reader.closing[parent]
            return text[:close] + entry + text[close:]
        last = max(siblings, key=lambda m: m.value_end)
        line_start = text.rfind("\n", 0, last.key_start) + 1
        indent = text[line_start:last.key_start]
        separator = f",\n{indent}" if not indent.strip() else ", "  # the last member on a line of its own
        return text[:last.value_end] + separator + entry + text[last.value_end:]
    raise EditError(f"unknown edit {edit!r}")


def apply_json(text: str, edits: list[Edit]) -> str:
    for edit in edits:
        text = apply_one(text, edit)
    return text
