"""JSON loading that keeps the position of every key.

This reader places values; it is not any consumer's verdict. It accepts what at least one consumer reads so the
rules can still judge the values: `//`, `#` and `/* */` comments, trailing commas and a byte-order mark (DeepSpeed's
hjson reads them; accelerate's and the Trainer's json.load refuse them), and NaN, Infinity and -Infinity
(json.load reads them as floats). Which consumer accepts the file is said by accelwiz.document.consumers, which
runs the consumers' own readers. Numbers keep JSON's meaning (`5e8` is a float, unlike YAML 1.1 where it is a
string). Duplicate keys are recorded: json.load keeps the last, DeepSpeed's reader refuses them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from accelwiz.document.model import KeyPath, Span
from accelwiz.errors import InputError

MAX_DEPTH = 64
# Python refuses int() of more than 4300 digits (sys.get_int_max_str_digits), so json.load (accelerate) and hjson
# (DeepSpeed) fail on such a number with ValueError; and no count or size a config holds exceeds a 64-bit integer
# (torch and the C libraries under it take int64), while a larger one overflows float() in any arithmetic.
MAX_INT_DIGITS = 4300
MAX_INT = 2**63 - 1
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
# json.load's literals (json.scanner: NaN, Infinity and -Infinity are its extensions, accepted by default)
_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan"), "Infinity": float("inf"),
             "-Infinity": float("-inf")}


class JsonReader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.key_spans: dict[KeyPath, Span] = {}
        self.value_spans: dict[KeyPath, Span] = {}
        self.duplicate_keys: list[tuple[KeyPath, Span]] = []
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def span_at(self, offset: int) -> Span:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return Span(lo + 1, offset - self._line_starts[lo] + 1)

    def fail(self, message: str) -> InputError:
        where = self.span_at(min(self.pos, len(self.text)))
        return InputError(f"invalid JSON: line {where.line}, column {where.column}: {message}",
                          hint="check for a missing comma, quote or brace near that place")

    def skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif ch == "#" or text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def parse(self) -> Any:
        self.skip_space()
        value = self.value(())
        self.skip_space()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the end of the document")
        return value

    def value(self, path: KeyPath) -> Any:
        if len(path) > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        self.skip_space()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        self.value_spans.setdefault(path, self.span_at(self.pos))
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj(path)
        if ch == "[":
            return self.array(path)
        if ch == '"':
            return self.string()
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return literal
        match = _NUMBER.match(self.text, self.pos)
        if match:
            token = match.group()
            if any(c in token for c in ".eE"):
                self.pos = match.end()
                return float(token)
            if len(token.lstrip("-")) > MAX_INT_DIGITS or abs(int(token)) > MAX_INT:
                where = self.span_at(self.pos)
                raise InputError(f"invalid JSON: line {where.line}, column {where.column}: {too_large(token)}",
                                 hint="write a number a config can use")
            self.pos = match.end()
            return int(token)
        raise self.fail(f"unexpected character {ch!r}" if ch.isprintable() else
                        f"unexpected character U+{ord(ch):04X}")

    def string(self) -> str:
        try:
            value, end = json.decoder.scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            self.pos = exc.pos
            raise self.fail(exc.msg) from None
        self.pos = end
        return value

    def obj(self, path: KeyPath) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            self.skip_space()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return result
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_span = self.span_at(self.pos)
            key = self.string()
            key_path = (*path, key)
            if key in result:
                self.duplicate_keys.append((key_path, key_span))
            self.key_spans[key_path] = key_span
            self.skip_space()
            if not self.text.startswith(":", self.pos):
                raise self.fail(f"expected ':' after the key {key!r}")
            self.pos += 1
            result[key] = self.value(key_path)
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")

    def array(self, path: KeyPath) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        while True:
            self.skip_space()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return result
            result.append(self.value((*path, len(result))))
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")


def too_large(token: str) -> str:
    digits = len(token.lstrip("+-"))
    shown = token if digits <= 24 else f"a {digits:,}-digit number"
    return f"{shown} is larger than any integer a config can hold (at most 2**63-1)"


def read_json(text: str) -> tuple[Any, JsonReader]:
    reader = JsonReader(text)
    return reader.parse(), reader
