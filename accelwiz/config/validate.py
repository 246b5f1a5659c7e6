"""Validate a document against its pydantic model and classify every error into a schema issue.

Pydantic reports one error per union member and locations that include model and union tags; this module maps
each error back to the key path in the data, merges the errors of one key, and decides what kind of mistake it
is (unknown key, wrong type, numeric string, YAML 1.1 boolean, ...). Each kind is reported by its own AW0xx rule.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError

from accelwiz.config.base import StrictModel
from accelwiz.document import Document, KeyPath

IssueKind = Literal[
    "unknown-key", "misplaced-key", "legacy-key", "removed-key", "missing-key", "wrong-type", "invalid-value",
    "numeric-string", "float-for-int", "yaml-boolean-for-name", "yaml-boolean-for-string",
]

_EXPECTED = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number", "bool_type": "a boolean", "bool_parsing": "a boolean",
    "string_type": "a string", "dict_type": "a mapping", "model_type": "a mapping", "model_attributes_type":
    "a mapping", "list_type": "a list", "tuple_type": "a list", "none_required": "null",
}
_NUMERIC_EXPECTATIONS = {"an integer", "a number"}


@dataclass(frozen=True)
class SchemaIssue:
    kind: IssueKind
    path: KeyPath
    message: str
    hint: str | None = None
    resembles: str | None = None  # an unknown key that is a near miss of this known one (a typo, an alias)


def schema_issues(document: Document, model: type[StrictModel]) -> list[SchemaIssue]:
    """Every schema problem in `document` (empty when it validates)."""
    try:
        model.model_validate(document.data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    else:
        return []
    grouped: dict[KeyPath, list[dict[str, Any]]] = {}
    for error in errors:
        grouped.setdefault(data_path(document.data, error["loc"], error["type"]), []).append(error)
    issues = [issue for path, errs in grouped.items() for issue in _classify(document, model, path, errs)]
    return sorted(issues, key=lambda i: (document.span(i.path), i.path))


def data_path(data: Any, loc: tuple[Any, ...], error_type: str) -> KeyPath:
    """The key path in `data` that a pydantic error location points at (union and model tags dropped)."""
    path: list[str | int] = []
    node = data
    for step in loc:
        in_mapping = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if in_mapping or in_list:
            node = node[step]
            path.append(step)
        elif error_type == "missing" and step == loc[-1]:
            path.append(step)
    return tuple(path)


def _classify(document: Document, model: type[StrictModel], path: KeyPath,
              errors: list[dict[str, Any]]) -> Iterator[SchemaIssue]:
    types_ = {e["type"] for e in errors}
    dotted = ".".join(map(str, path))
    if "extra_forbidden" in types_:
        yield _extra_key(model, path)
        return
    if "missing" in types_:
        yield SchemaIssue("missing-key", path, f"required key `{dotted}` is missing")
        return
    value = errors[0]["input"]
    expected = _expected(errors)
    if isinstance(value, str) and expected & _NUMERIC_EXPECTATIONS and _as_number(value) is not None:
        yield _number_as_text(document, path, value)
        return
    if isinstance(value, float) and "an integer" in expected and value.is_integer():
        yield SchemaIssue("float-for-int", path, f"`{dotted}` is the float {value!r} where an integer is required",
                          f"write it as an integer: `{int(value)}`")
        return
    if isinstance(value, bool) and path in document.plain_scalars and "a boolean" not in expected:
        word = document.plain_scalars[path]
        kind = "yaml-boolean-for-name" if path == ("distributed_type",) else "yaml-boolean-for-string"
        yield SchemaIssue(kind, path, f"`{dotted}: {word}` is read by YAML 1.1 as the boolean {str(value).lower()}",
                          f"quote it: `{path[-1]}: '{word}'`")
        return
    bounds = [e for e in errors if e["type"] in ("greater_than", "greater_than_equal", "less_than",
                                                  "less_than_equal", "too_short", "too_long")]
    if bounds and not isinstance(value, str):  # `PositiveInt | Auto` given 0: the bound is what failed
        yield SchemaIssue("invalid-value", path, f"`{dotted}` is {value!r}: {bounds[0]['msg'].lower()}")
        return
    literals = _literal_choices(errors)
    if literals and (not expected - {"one of"} or isinstance(value, str)):
        shown = ", ".join(repr(c) for c in literals)
        section = model_at(model, path[:-1]) if path else None
        renamed = section.RENAMED_VALUES.get(str(path[-1]), {}) if section is not None else {}
        hint = renamed.get(value) if isinstance(value, str) else None
        hint = hint or _value_hint(value, literals)
        yield SchemaIssue("invalid-value", path, f"`{dotted}` is {value!r}; expected one of {shown}", hint)
        return
    if bounds:
        yield SchemaIssue("invalid-value", path, f"`{dotted}` is {value!r}: {bounds[0]['msg'].lower()}")
        return
    described = " or ".join(sorted(expected - {"one of"})) or "a different value"
    if literals:
        described += " or one of " + ", ".join(repr(c) for c in literals)
    yield SchemaIssue("wrong-type", path, f"`{dotted}` is {_describe(value)}; expected {described}")


def _number_as_text(document: Document, path: KeyPath, value: str) -> SchemaIssue:
    """A number written as a string where a number is expected: `"8"`, or `5e8` that YAML 1.1 loads as text."""
    dotted = ".".join(map(str, path))
    if "e" in value.lower() and "." not in value:
        why = "quoted, so it is text" if document.syntax == "json" else f"YAML 1.1 reads `{value}` as text"
        return SchemaIssue("float-for-int", path, f"`{dotted}` is the string {value!r}: {why}, not a number",
                           f"write it out as an integer: `{int(float(value))}`")
    return SchemaIssue("numeric-string", path, f"`{dotted}` is the string {value!r}, not a number",
                       f"remove the quotes: `{value}`")


def _extra_key(model: type[StrictModel], path: KeyPath) -> SchemaIssue:
    key = str(path[-1])
    section = model_at(model, path[:-1])
    dotted = ".".join(map(str, path))
    if section is not None:
        for table, kind in ((section.REMOVED_KEYS, "removed-key"), (section.LEGACY_KEYS, "legacy-key"),
                            (section.MISPLACED_KEYS, "misplaced-key")):
            if key in table:
                return SchemaIssue(kind, path, _extra_message(kind, dotted), table[key])  # type: ignore[arg-type]
        known = known_keys(section)
        if key in known:  # pydantic reports the field name as extra when its alias is given too
            return SchemaIssue("unknown-key", path, f"`{dotted}` is given under two names (a key and its alias)",
                               "keep one spelling", resembles=key)
        suggestion = difflib.get_close_matches(key.strip(), known, n=1, cutoff=0.75)
        if suggestion and suggestion[0] == key.strip():
            return SchemaIssue("unknown-key", path, f"unknown key `{dotted}` (it has stray whitespace)",
                               f"remove the whitespace: `{suggestion[0]}`", resembles=suggestion[0])
        if suggestion:
            return SchemaIssue("unknown-key", path, f"unknown key `{dotted}`; did you mean `{suggestion[0]}`?",
                               f"rename it to `{suggestion[0]}`", resembles=suggestion[0])
    return SchemaIssue("unknown-key", path, f"unknown key `{dotted}`", "remove it, or check the spelling")


def _extra_message(kind: str, dotted: str) -> str:
    return {
        "removed-key": f"`{dotted}` was removed and is now refused",
        "legacy-key": f"`{dotted}` is a legacy key",
        "misplaced-key": f"`{dotted}` does not belong here and is ignored",
    }[kind]


def known_keys(section: type[BaseModel]) -> list[str]:
    names: list[str] = []
    for name, info in section.model_fields.items():
        names.append(name)
        if info.alias:
            names.append(info.alias)
        choices = getattr(info.validation_alias, "choices", None)  # AliasChoices: every accepted spelling
        names += [c for c in choices or () if isinstance(c, str)]
    return list(dict.fromkeys(names))


def model_at(model: type[BaseModel], path: KeyPath) -> type[StrictModel] | None:
    """The section model that describes the mapping at `path`, following field annotations."""
    current: Any = model
    for step in path:
        if isinstance(step, int):
            current = _item_model(current)
        else:
            field = _field(current, step)
            if field is None:
                return None
            current = _section_model(field.annotation)
        if current is None:
            return None
    return current if isinstance(current, type) and issubclass(current, StrictModel) else None


def _field(model: Any, key: str) -> Any:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _section_model(annotation: Any) -> Any:
    for candidate in _flatten(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _item_model(annotation: Any) -> Any:
    """Neither config file has lists of sections, so a list index never leads to a model."""
    return None


def _flatten(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _flatten(arg)]
    if origin is typing.Annotated:
        return _flatten(typing.get_args(annotation)[0])
    return [annotation]


def _expected(errors: list[dict[str, Any]]) -> set[str]:
    found = set()
    for e in errors:
        if e["type"] in _EXPECTED:
            found.add(_EXPECTED[e["type"]])
        elif e["type"] in ("literal_error", "enum"):
            found.add("one of")
    return found


def _literal_choices(errors: list[dict[str, Any]]) -> list[Any]:
    choices: list[Any] = []
    for e in errors:
        if e["type"] in ("literal_error", "enum"):
            expected = e.get("ctx", {}).get("expected", "")
            for part in expected.replace(" or ", ", ").split(", "):
                choice = _literal_value(part.strip())
                if part.strip() and choice not in choices:
                    choices.append(choice)
    return choices


def _literal_value(text: str) -> Any:
    """One choice as pydantic prints it: `'auto'` is the string auto, a bare `3` the integer 3."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text


def _value_hint(value: Any, choices: list[Any]) -> str | None:
    if isinstance(value, str):
        quoted = [c for c in choices if not isinstance(c, str) and str(c) == value.strip()]
        if quoted:
            return f"remove the quotes: {quoted[0]!r}"
        same_letters = [c for c in choices if str(c).lower() == value.lower()]
        if same_letters:
            return f"values are case-sensitive: write {same_letters[0]!r}"
        match = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
        if match:
            return f"did you mean {match[0]!r}?"
    return None


def _as_number(text: str) -> float | None:
    """The number a quoted string spells, or None; "1e400", "nan" and "inf" are no number a config can use (and
    `int(float("1e400"))` would overflow)."""
    import math

    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {value!r}"
    return f"the {type(value).__name__} {value!r}"
