"""Safe YAML loading that keeps positions, reports duplicate keys and refuses alias bombs.

PyYAML's composer gives a node tree with marks; we build the Python data from it ourselves (scalars through
SafeConstructor, so only plain YAML types can appear) and record where every key and value was written.
"""

from __future__ import annotations

from typing import Any

import yaml

from accelwiz.document.json_reader import MAX_INT, MAX_INT_DIGITS, too_large
from accelwiz.document.model import KeyPath, Span
from accelwiz.errors import InputError

# A real config has a few hundred nodes; aliases can make a tiny file expand to billions ("billion laughs").
MAX_NODES = 200_000
MAX_DEPTH = 64
_COLLECTION_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap"}
_YAML11_BOOLEAN_WORDS = {"yes", "no", "on", "off", "y", "n"}


class YamlTree:
    def __init__(self) -> None:
        self.key_spans: dict[KeyPath, Span] = {}
        self.value_spans: dict[KeyPath, Span] = {}
        self.plain_scalars: dict[KeyPath, str] = {}
        self.duplicate_keys: list[tuple[KeyPath, Span]] = []
        self._constructor = yaml.constructor.SafeConstructor()
        self._visited = 0

    def build(self, node: yaml.Node, path: KeyPath = ()) -> Any:
        self._visited += 1
        if self._visited > MAX_NODES:
            raise InputError(f"more than {MAX_NODES:,} YAML nodes (an alias bomb?)",
                             hint="a config file needs no YAML anchors or aliases; write the values out")
        if len(path) > MAX_DEPTH:
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels",
                             hint="a config file is at most a few levels deep")
        self.value_spans.setdefault(path, _span(node))
        if not isinstance(node, yaml.ScalarNode) and node.tag not in _COLLECTION_TAGS:
            raise InputError(f"unsupported YAML tag {node.tag} at line {node.start_mark.line + 1}",
                             hint="config files hold plain strings, numbers, booleans, lists and mappings")
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        value = self._scalar(node)
        if node.style is None and isinstance(value, bool) and node.value.lower() in _YAML11_BOOLEAN_WORDS:
            self.plain_scalars[path] = node.value
        return value

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        """A scalar as yaml.safe_load reads it; an integer beyond int64 is refused (see json_reader.MAX_INT:
        yaml.safe_load itself fails with ValueError past 4300 digits)."""
        resolved_int = node.tag == "tag:yaml.org,2002:int"
        too_long = resolved_int and len(node.value) > MAX_INT_DIGITS
        value = None if too_long else self._constructor.construct_object(node)
        if resolved_int and (value is None or abs(value) > MAX_INT):
            raise InputError(f"line {node.start_mark.line + 1}: {too_large(node.value)}",
                             hint="write a number a config can use")
        return value

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        self._constructor.flatten_mapping(node)  # resolves YAML merge keys (<<)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(f"line {key_node.start_mark.line + 1}: a mapping key must be a plain value")
            # Keys keep their written text: `yes:` stays "yes" instead of becoming True.
            key = key_node.value
            key_path = (*path, key)
            if key in result:
                self.duplicate_keys.append((key_path, _span(key_node)))
            self.key_spans[key_path] = _span(key_node)
            self.value_spans.pop(key_path, None)
            result[key] = self.build(value_node, key_path)
        return result


def _span(node: yaml.Node) -> Span:
    return Span(node.start_mark.line + 1, node.start_mark.column + 1)


def read_yaml(text: str) -> tuple[Any, YamlTree]:
    try:
        # the loader checks the characters as it is made: a control character raises ReaderError here already
        loader = yaml.SafeLoader(text)
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", hint="YAML allows no control characters; remove them") from None
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = exc.problem or exc.context or ""
        # PyYAML, and so accelerate's yaml.safe_load, refuses a tab where a token starts (after `key:` too)
        hint = ("replace the tab with spaces: yaml.safe_load (accelerate's loader) refuses it" if "'\\t'" in problem
                else "fix the syntax; `key: value` pairs need a space after the colon")
        raise InputError(f"invalid YAML: {where}{problem}", hint=hint) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InputError("invalid YAML: nesting is too deep to read") from None
    finally:
        loader.dispose()
    tree = YamlTree()
    if node is None:
        return None, tree
    try:
        data = tree.build(node)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}: " if mark else ""
        raise InputError(f"unsupported YAML value: {where}{exc.problem}",
                         hint="config files hold plain strings, numbers, booleans, lists and mappings") from None
    except RecursionError:
        raise InputError("invalid YAML: nesting is too deep to read") from None
    return data, tree
