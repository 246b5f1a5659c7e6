"""Apply edits to YAML text through ruamel.yaml's round trip: comments, key order, quoting and blank lines stay.

A file whose unedited round trip is not byte-identical (an unusual indentation, a flow style ruamel rewrites) is
not edited at all: `EditError` says so, and the fix is reported as not applied.
"""

from __future__ import annotations

import io
from typing import Any

from accelwiz.fix.edits import AddKey, DeleteKey, Edit, EditError, RenameKey, SetValue


def _yaml(text: str = "") -> Any:
    import re

    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never wrap a long line
    # the file's own mapping indentation (accelerate writes 2, some docs 1 or 4)
    nested = re.search(r"^[^\s#][^\n]*:\s*\n( +)[^\s-]", text, re.M)
    yaml.indent(mapping=len(nested.group(1)) if nested else 2, sequence=4, offset=2)
    if re.search(r":[ \t]+null[ \t]*(#.*)?$", text, re.M):
        # accelerate writes `key: null`; ruamel would write `key:`
        yaml.representer.add_representer(type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    return yaml


def _dump(yaml: Any, data: Any, like: str) -> str:
    stream = io.StringIO()
    yaml.dump(data, stream)
    text = stream.getvalue()
    # ruamel always ends with a newline; keep a file that had none without one
    return text[:-1] if not like.endswith("\n") and text.endswith("\n") else text


def _load(text: str, *, strict_layout: bool = True) -> tuple[Any, Any]:
    from ruamel.yaml.error import YAMLError

    yaml = _yaml(text)
    try:
        data = yaml.load(text)
    except YAMLError as exc:  # scanner, parser, composer and constructor errors, duplicate keys among them
        raise EditError(f"ruamel.yaml cannot round-trip this file: {str(exc).splitlines()[0]}") from None
    if strict_layout and _dump(yaml, data, text) != text:
        raise EditError("the file does not survive a YAML round trip unchanged (its layout would be rewritten)")
    return yaml, data


def _parent(data: Any, path: tuple) -> Any:
    node = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            raise EditError(f"`{'.'.join(map(str, path))}` is not in the file") from None
    return node


def _styled(value: Any, quote: str) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    if isinstance(value, str) and quote == "single":
        return SingleQuotedScalarString(value)
    if isinstance(value, str) and quote == "double":
        return DoubleQuotedScalarString(value)
    return value


def apply_yaml(text: str, edits: list[Edit], *, strict_layout: bool = True) -> str:
    """`strict_layout` False: edit even a file whose layout the round trip normalizes (trailing spaces, `{ }`)."""
    yaml, data = _load(text, strict_layout=strict_layout)
    for edit in edits:
        if isinstance(edit, SetValue):
            parent = _parent(data, edit.path[:-1])
            if edit.path[-1] not in parent:
                raise EditError(f"`{'.'.join(map(str, edit.path))}` is not in the file")
            parent[edit.path[-1]] = _styled(edit.value, edit.quote)
        elif isinstance(edit, RenameKey):
            parent = _parent(data, edit.path[:-1])
            old = edit.path[-1]
            if old not in parent or edit.new_name in parent:
                raise EditError(f"cannot rename `{old}` to `{edit.new_name}`")
            position = list(parent.keys()).index(old)
            comment = parent.ca.items.pop(old, None)
            value = parent.pop(old)
            parent.insert(position, edit.new_name, value)
            if comment is not None:
                parent.ca.items[edit.new_name] = comment
        elif isinstance(edit, DeleteKey):
            parent = _parent(data, edit.path[:-1])
            key = edit.path[-1]
            if key not in parent:
                raise EditError(f"`{key}` is not in the file")
            keys = list(parent.keys())
            position = keys.index(key)
            comment = parent.ca.items.pop(key, None)
            del parent[key]
            # comment lines after the deleted key belong before the next one: hand them to the previous key
            if comment is not None and position > 0 and len(comment) > 2 and comment[2] is not None:
                following = comment[2].value.split("\n", 1)
                if len(following) == 2 and following[1].strip():
                    previous = keys[position - 1]
                    from ruamel.yaml.tokens import CommentToken

                    token = CommentToken("\n" + following[1], comment[2].start_mark, None)
                    entry = parent.ca.items.setdefault(previous, [None, None, None, None])
                    if entry[2] is None:
                        entry[2] = token
        elif isinstance(edit, AddKey):
            parent = _parent(data, edit.parent)
            if edit.key not in parent:
                parent.insert(len(parent), edit.key, edit.value)
    return _dump(yaml, data, text)
