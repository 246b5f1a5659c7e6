"""The one file writer: every file accelwiz writes goes through `atomic_write` (a new file, or one replaced
whole) or `update` (a file it read, edited and writes back: `check --fix`, `migrate`).

What it guarantees, and why:
- a reader sees the old file or the whole new one: the text goes to a temporary file in the same folder, created
  with O_EXCL (mkstemp: never a name that exists, so never through a planted link), fsynced, then `os.replace`d;
  the temporary file is removed on every way out;
- the new file keeps the owner, group and mode of the one it replaces (root fixing another user's file leaves it
  theirs);
- one rule for links, the kernel's fs.protected_symlinks in every folder: a link is followed only when this
  user or the folder's owner owns it (`resolve_target`); a symlinked config of the user's is edited where the
  link points, the link kept; a file accelwiz creates (`-o`, `--slurm`, init's files: `new_output`) is never
  written through a link: refused, or with --force the link itself replaced; a `.bak` (`follow_symlinks=False`)
  replaces whatever sits at its name;
- several new files are written all or none, Ctrl-C, SIGTERM and SIGKILL included (atomic_stage.py);
- `update` refuses, in one line, a file that changed since it was read (content, inode): under an advisory lock
  (fcntl.flock) shared by every accelwiz process, so two commands on one file cannot both report success while
  one edit is lost; an editor that ignores the lock is still caught by the content check;
- `update` keeps what the edit did not touch byte for byte: CRLF or LF per line, the UTF-8 byte-order mark, a
  missing final newline (the editors see LF text, `Snapshot.text`);
- a read-only folder, a full disk (ENOSPC), the size limit (EFBIG, `ulimit -f`) are one WriteError line (exit 2).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import fcntl
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from accelwiz.document.read import is_dir, is_file
from accelwiz.errors import AccelwizError, WriteError

_BOM = "\ufeff"
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_REASONS = {
    errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
    errno.EFBIG: "the file size limit is reached (ulimit -f)", errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied", errno.EPERM: "permission denied",
}
_held: dict[tuple[int, int], int] = {}  # (device, inode) -> locked descriptor, so a holder may write


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


def atomic_write(path: Path, text: str | bytes, *, create_parents: bool = True, follow_symlinks: bool = True,
                 new_output: bool = False, force: bool = False) -> None:
    """Write `text` to `path` whole (a new file, or one replaced without reading it).

    Links at `path`: `follow_symlinks=False` replaces the link itself (for `.bak` names); `new_output=True` (a
    file the command creates: `-o`, `--slurm`, init's files) refuses a link unless `force`, and then replaces the
    link, never writing its target; otherwise the file a link names is written, if the link passes the
    ownership rule (`resolve_target`)."""
    path = Path(path)
    if new_output and _is_symlink(path):
        if not force:
            raise link_refused(path)
        follow_symlinks = False
    target = resolve_target(path, strict=True) if follow_symlinks else path
    ensure_folder(target, create_parents=create_parents, shown=path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    with locked([target] if is_file(target) and not target.is_symlink() else []):
        _replace(target, data, shown=path)


def ensure_folder(target: Path, *, create_parents: bool, shown: Path) -> None:
    """The folder `target` goes in: created (`create_parents`), or refused in one line when it is missing."""
    directory = target.parent if str(target.parent) else Path(".")
    if create_parents:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _write_error(shown, exc) from None
    elif not is_dir(directory):
        raise WriteError(f"cannot write {shown}: the folder {directory} does not exist; nothing was written",
                         hint=f"create it first (mkdir -p {directory}), or write in an existing folder")


def resolve_target(path: Path, *, strict: bool = False) -> Path:
    """The file `path` names: a symlink (or a chain) resolved, so the link stays and its file is edited.

    One rule for links, the kernel's fs.protected_symlinks applied in every folder: a link is followed only if
    this user or the owner of the folder holding it owns it. A link someone else planted (in a shared, sticky
    folder: /tmp, a group project space) is a WriteError with `strict` (the writers), else the path itself is
    returned and the reader judges it."""
    path = Path(path)
    current = path
    try:
        for _ in range(40):  # the kernel's own limit on a chain of links (MAXSYMLINKS)
            if not current.is_symlink():
                return current
            _check_link_owner(current)
            current = current.parent / os.readlink(current)
    except (OSError, ValueError):  # a name too long, a NUL byte: the reader or the writer says so in one line
        return path
    except WriteError:
        if strict:
            raise
        return path
    return path


def _check_link_owner(link: Path) -> None:
    info = os.lstat(link)
    folder = os.stat(link.parent if str(link.parent) else Path("."))
    if info.st_uid in (os.geteuid(), folder.st_uid):
        return
    raise WriteError(f"cannot write {link}: it is a link owned by uid {info.st_uid} in a folder owned by uid "
                     f"{folder.st_uid}; accelwiz follows only links owned by you (uid {os.geteuid()}) or by the "
                     "folder's owner (the kernel's protected_symlinks rule); nothing was written",
                     hint="check who planted the link; remove it, or write the file it names directly")


def link_refused(path: Path) -> WriteError:
    return WriteError(f"cannot write {path}: it is a symbolic link (to {_link_text(path)}); accelwiz does not write "
                      "a new file through a link; nothing was written",
                      hint="remove the link or pick another name (init, convert and migrate -o: --force replaces "
                           "the link itself, never what it points to)")


def _is_symlink(path: Path) -> bool:
    try:
        return path.is_symlink()
    except (OSError, ValueError):
        return False


def _link_text(path: Path) -> str:
    from accelwiz.console import printable

    try:
        return printable(os.readlink(path))
    except OSError:
        return "?"


@contextlib.contextmanager
def locked(paths: Sequence[Path]) -> Iterator[None]:
    """An exclusive flock on each existing file, taken in one order (no deadlock between two commands) and held
    until the block ends; re-entrant within this process (`migrate` holds it while `update` writes)."""
    taken: list[tuple[int, int]] = []
    try:
        for path in sorted({Path(os.path.abspath(p)) for p in paths}):
            key = _lock(path)
            if key is not None:
                taken.append(key)
        yield
    finally:
        for key in taken:
            os.close(_held.pop(key))  # closing the descriptor releases the lock


def _lock(path: Path) -> tuple[int, int] | None:
    """Lock the file now at `path`: if it was replaced while we waited, lock the new one (the old inode's lock
    guards nothing any more)."""
    while True:
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError:  # missing, unreadable, a name too long: nothing to lock; the read or write says why
            return None
        info = os.fstat(descriptor)
        key = (info.st_dev, info.st_ino)
        if key in _held or not _is_regular(info.st_mode):  # a FIFO or device is refused by the reader
            os.close(descriptor)
            return None
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == key:
            _held[key] = descriptor
            return key
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


def _replace(target: Path, data: bytes, *, shown: Path) -> None:
    """Temporary file (O_EXCL) in the target's folder, same owner and mode, fsync, os.replace; cleaned up on
    every way out."""
    temporary = prepare(target, data, shown=shown)
    try:
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise _write_error(shown, exc) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def prepare(target: Path, data: bytes, *, shown: Path) -> Path:
    """`data` in a temporary file beside `target` (O_EXCL, the owner and mode of the file it will replace,
    fsynced), ready to be renamed over it; removed again if anything fails."""
    directory = target.parent if str(target.parent) else Path(".")
    try:
        before = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise _write_error(shown, exc) from None
    if before is not None and not _is_regular(before.st_mode) and not _is_link(before.st_mode):
        raise WriteError(f"cannot write {shown}: it is not a regular file", hint="pass a file name")
    _sweep_orphans(directory, target.name)
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=_temporary_prefix(target.name, os.getpid()), suffix=".tmp",
                                             dir=directory)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
            _keep_owner_and_mode(stream.fileno(), before)
        ready, temporary = Path(temporary), None
        return ready
    except OSError as exc:
        raise _write_error(shown, exc) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _temporary_prefix(name: str, pid: int) -> str:
    """The writer's temporary files name their process: one left by a writer that was SIGKILLed (no `finally`
    runs) is recognised, and removed, by the next write of the same file."""
    return f".{name}.accelwiz-{pid}."


def _sweep_orphans(directory: Path, name: str) -> None:
    """Remove the temporary files of `name` whose writing process is gone (killed mid-write): regular files only,
    never a link, never one of a live process."""
    prefix = f".{name}.accelwiz-"
    try:
        entries = [e for e in os.scandir(directory)
                   if e.name.startswith(prefix) and e.name.endswith((".tmp", ".orig"))]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)) or not entry.is_file(follow_symlinks=False):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _keep_owner_and_mode(descriptor: int, before: os.stat_result | None) -> None:
    if before is None or _is_link(before.st_mode):
        os.fchmod(descriptor, 0o666 & ~_umask())  # mkstemp creates 0600; a new file gets what the umask allows
        return
    if (before.st_uid, before.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):  # only root may give a file away; others keep theirs
            os.fchown(descriptor, before.st_uid, before.st_gid)
    os.fchmod(descriptor, before.st_mode & 0o7777)  # after chown, which clears set-id bits


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


def _write_error(path: Path, exc: OSError) -> WriteError:
    reason = _REASONS.get(exc.errno or 0, exc.strerror or str(exc))
    folder = path.parent if str(path.parent) else Path(".")
    hint = {errno.ENOSPC: "free some space, or write elsewhere with -o",
            errno.EFBIG: "raise the limit (ulimit -f unlimited), or write elsewhere with -o",
            errno.EROFS: "write elsewhere with -o"}.get(exc.errno or 0, f"check that you can write to {folder}")
    return WriteError(f"cannot write {path}: {reason}; nothing was written", hint=hint)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _is_link(mode: int) -> bool:
    import stat

    return stat.S_ISLNK(mode)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
