"""Words for a shell and text for a terminal: the one quoting of every value that reaches an sbatch script, a
printed node command or a `$ ...` line.

`quote` is `shlex.quote`, except that a word with a control character (a newline, ESC, an OSC 52 clipboard
write, a bidi override) becomes bash's `$'...'` with every such character as an escape: the word still means
itself to bash (the scripts are `#!/bin/bash`, node commands are run by bash), and printing it cannot move the
cursor, clear the screen or set the clipboard. `Raw` marks the few words accelwiz writes as shell code on purpose
(`"$SLURM_NODEID"`): they are placed by position, never found by searching the joined text, so no argument that
merely looks like a placeholder is ever rewritten.
"""

from __future__ import annotations

import shlex
import unicodedata
from collections.abc import Iterable

# Cc: C0/C1 controls (ESC, CR, BEL, NEL, CSI...); Cf: invisible format characters (bidi overrides, zero width);
# Zl/Zp: the Unicode line and paragraph separators (a line break to some terminals and editors)
_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


class Raw(str):
    """A word that is already shell code, written by accelwiz (an expansion such as `"$SLURM_NODEID"`)."""


def unprintable(text: str) -> bool:
    return any(unicodedata.category(char) in _UNPRINTABLE for char in text)


def quote(word: str) -> str:
    """`word` as one shell word: shlex.quote, or `$'...'` with escapes when it holds a control character."""
    if isinstance(word, Raw):
        return str(word)
    if not unprintable(word):
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(char) for char in word) + "'"


def join(words: Iterable[str]) -> str:
    """A command line: every word quoted, `Raw` words as they are."""
    return " ".join(quote(word) for word in words)


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """Text for a terminal (a message, a path in a note): each control character shown as its escape, so that a
    hostile value is seen, not executed by the terminal. Newlines (and tabs) of multi-line text are kept when
    asked."""
    kept = "\n\t" if keep_newlines else ""
    return "".join(
        char if char in kept or unicodedata.category(char) not in _UNPRINTABLE else _escape(char) for char in text
    )


def _escape(char: str) -> str:
    code = ord(char)
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}
    if char in named:
        return named[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _ansi_c(char: str) -> str:
    """One character inside bash's $'...': backslash and quote escaped, a control as the escapes of its UTF-8
    bytes (`\\xe2\\x80\\xae`, not `\\u202e`, which bash decodes by the locale: bytes mean the same under LANG=C)."""
    if char in "\\'":
        return "\\" + char
    if unicodedata.category(char) not in _UNPRINTABLE:
        return char
    if ord(char) < 0x80:
        return _escape(char)
    return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
