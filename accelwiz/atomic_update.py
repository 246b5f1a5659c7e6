"""Editing a file in place (`check --fix`, `migrate`): read it (`read_for_update`), then write the edited text back
(`update`, `update_all`) only if nobody changed it in between, keeping what the edit did not touch byte for byte
(CRLF or LF per line, the byte-order mark, a missing final newline: `restore_layout`). The writing itself, the
lock and the link rule are the one writer's (atomic.py; its docstring says what every write guarantees).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from accelwiz.atomic import _write_error, locked, prepare, resolve_target
from accelwiz.errors import AccelwizError, WriteError

_BOM = "\ufeff"
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Snapshot:
    """A file as `read_for_update` read it: what the editors see, and what `update` must find unchanged."""

    path: Path  # as the user named it
    target: Path  # the file itself (a symlink resolved)
    raw: bytes
    inode: tuple[int, int]

    @property
    def original(self) -> str:
        """The decoded text with its own line endings, without the byte-order mark."""
        from accelwiz.document.read import decode_text

        return decode_text(self.raw, self.path).removeprefix(_BOM)

    @property
    def text(self) -> str:
        """What an editor works on: LF line endings, no byte-order mark."""
        return self.original.replace("\r\n", "\n")


def read_for_update(path: Path) -> Snapshot:
    """Read `path` (bounded, a regular file, UTF-8: `document.read`) to edit it and `update` it later."""
    from accelwiz.document.read import read_bytes

    target = resolve_target(Path(path), strict=True)
    raw = read_bytes(target)
    info = os.stat(target)
    return Snapshot(Path(path), target, raw, (info.st_dev, info.st_ino))


def update(snapshot: Snapshot, text: str) -> None:
    """Write `text` (LF lines, as `Snapshot.text`) in place of the file `snapshot` read; refuse when it changed."""
    update_all([(snapshot, text)])


def update_all(edits: Sequence[tuple[Snapshot, str]]) -> None:
    """`update` several files: all are locked and verified before the first is written, so a change to any of
    them writes none.

    The compare runs after the slow part (each new text written and fsynced beside its file) and right before the
    renames, and the lock is held until the renames are durable (the folders fsynced): an editor that ignores the
    lock and saves while the fix fsyncs is refused, not overwritten (issue 32). What is left is the few
    microseconds between the compare and the rename, which no POSIX rename can close."""
    with locked([snapshot.target for snapshot, _ in edits]):
        for snapshot, _ in edits:
            _verify_unchanged(snapshot)  # before the slow part: a change already made costs no write
        ready: list[tuple[Snapshot, Path]] = []
        try:
            for snapshot, text in edits:
                data = restore_layout(snapshot, text).encode("utf-8")
                ready.append((snapshot, prepare(snapshot.target, data, shown=snapshot.path)))
            for snapshot, _ in edits:
                _verify_unchanged(snapshot)  # again, after the fsyncs: the window up to the rename
            while ready:
                snapshot, temporary = ready[0]
                try:
                    os.replace(temporary, snapshot.target)
                except OSError as exc:
                    raise _write_error(snapshot.path, exc) from None
                ready.pop(0)
                _sync_folder(snapshot.target)
        finally:
            for _, temporary in ready:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


def _sync_folder(target: Path) -> None:
    """fsync the folder holding `target`, so its rename survives a crash before the lock is let go; a file system
    that cannot fsync a folder (some network mounts) keeps the rename as it may."""
    directory = target.parent if str(target.parent) else Path(".")
    try:
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _verify_unchanged(snapshot: Snapshot) -> None:
    from accelwiz.document.read import read_bytes

    try:
        info = os.stat(snapshot.target)
        same = (info.st_dev, info.st_ino) == snapshot.inode and read_bytes(snapshot.target) == snapshot.raw
    except (OSError, AccelwizError):  # gone, or no longer a readable file: changed
        same = False
    if not same:
        raise WriteError(f"{snapshot.path} changed since accelwiz read it (another program or command wrote it); "
                         "nothing was written", hint="run the command again on the file as it is now")


def restore_layout(snapshot: Snapshot, text: str) -> str:
    """`text` (LF lines) written as the original was: lines the edit left alone keep their bytes (CRLF or LF),
    new lines take the file's usual ending, the byte-order mark and a missing final newline are kept."""
    old = _LINE.findall(snapshot.original)
    new = _LINE.findall(text)
    crlf = sum(line.endswith("\r\n") for line in old)
    ending = "\r\n" if crlf > sum(line.endswith("\n") for line in old) - crlf else "\n"
    matcher = difflib.SequenceMatcher(None, [_bare(x) for x in old], [_bare(x) for x in new], autojunk=False)
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += old[i1:i2]
        else:
            lines += [_bare(line) + (ending if line.endswith("\n") else "") for line in new[j1:j2]]
    for i, line in enumerate(lines[:-1]):  # an unterminated last line that is no longer last
        if not line.endswith("\n"):
            lines[i] = line + ending
    if lines and old and not old[-1].endswith("\n") and lines[-1].endswith("\n"):
        lines[-1] = _bare(lines[-1])  # the file had no final newline: it still has none
    result = "".join(lines)
    return _BOM + result if snapshot.raw.startswith(b"\xef\xbb\xbf") else result


def _bare(line: str) -> str:
    return line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith("\n") else line
