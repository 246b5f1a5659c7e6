"""The one file writer: every file accelwiz writes goes through `atomic_write` (a new file, or one replaced
whole) or `update` (a file it read, edited and writes back: `check --fix`, `migrate`; atomic_update.py, over this
module's `prepare`, `locked` and `resolve_target`).

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

import shlex

import contextlib
import errno
import fcntl
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from accelwiz.document.read import is_dir, is_file
from accelwiz.errors import WriteError

_REASONS = {
    errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
    errno.EFBIG: "the file size limit is reached (ulimit -f)", errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied", errno.EPERM: "permission denied",
}
_held: dict[tuple[int, int], int] = {}  # (device, inode) -> locked descriptor, so a holder may write


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
                         hint=f"create it first (mkdir -p {shlex.quote(str(directory))}), or write in an existing "
                              "folder")


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
