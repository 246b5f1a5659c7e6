"""Several new files all or none, even under signals: `init`'s YAML, JSON and plan; `convert`'s YAML, JSON and
plan. One file at a time is atomic (atomic.py); a group is not, unless it is staged:

1. every file is written to a temporary file beside its target and fsynced (nothing visible has changed);
2. a journal (`.accelwiz-stage-<pid>.json`, in the first file's folder) lists the targets, and each existing
   target gets a hard link `.<name>.accelwiz-<pid>.orig` to its current inode (the old file, kept for free);
3. the temporary files are renamed over their targets;
4. the journal is removed: the commit point, one unlink. Then the `.orig` links go.

Ctrl-C, SIGTERM or an error before (4) puts every target back (its `.orig`, or removes a file that did not
exist) and exits 130 ("interrupted; nothing was written"). A SIGKILL runs no handler: the next staged write in
that folder finds the journal of a process that is gone and rolls it back the same way, before writing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from accelwiz.atomic import (_alive, _is_symlink, _sweep_orphans, _write_error, atomic_write, ensure_folder,
                             link_refused, prepare)
from accelwiz.document.read import is_dir
from accelwiz.errors import WriteError

JOURNAL_PREFIX = ".accelwiz-stage-"


class Interrupted(KeyboardInterrupt):
    """SIGTERM while files were being staged: handled as Ctrl-C is (rolled back, exit 130)."""


def write_all(files: Sequence[tuple[Path, str | bytes]], *, create_parents: bool = True,
              force: bool = False) -> None:
    """Write every (path, text) as a new output (a link at a name refused unless `force`, then replaced, never
    followed), all or none. A YAML that names a JSON which could not be written would be worse than no output."""
    targets = [Path(path) for path, _ in files]
    for folder in {_folder(t) for t in targets}:
        recover(folder)
    for path in targets:
        _refuse(path, force=force, create_parents=create_parents)
    journal = _folder(targets[0]) / f"{JOURNAL_PREFIX}{os.getpid()}.json"
    temporaries: list[Path] = []
    with _term_as_interrupt():
        try:
            for path, text in files:
                data = text.encode("utf-8") if isinstance(text, str) else text
                temporaries.append(prepare(Path(path), data, shown=Path(path)))
            existed = [_keep_original(path) for path in targets]
            atomic_write(journal, json.dumps([[str(t.absolute()), e] for t, e in zip(targets, existed)]),
                         follow_symlinks=False)
            for temporary, path in zip(temporaries, targets):
                os.replace(temporary, path)
            journal.unlink()  # committed
        except OSError as exc:
            _roll_back(journal, [(t, True) for t in targets])
            raise _write_error(targets[0], exc) from None
        except BaseException:
            _roll_back(journal, [(t, True) for t in targets])
            raise
        finally:
            for temporary in temporaries:
                with contextlib.suppress(OSError):
                    temporary.unlink()
    for path in targets:
        with contextlib.suppress(OSError):
            _original(path).unlink()


def recover(folder: Path) -> None:
    """Roll back the staged writes a killed accelwiz left in `folder` (its journal stands, its process is gone),
    and remove the `.orig` links of committed ones."""
    try:
        journals = [e for e in os.scandir(folder) if e.name.startswith(JOURNAL_PREFIX) and e.name.endswith(".json")]
    except OSError:
        return
    for entry in journals:
        pid = entry.name[len(JOURNAL_PREFIX):-len(".json")]
        if not pid.isdigit() or _alive(int(pid)) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            from accelwiz.document.read import read_text

            listed = json.loads(read_text(Path(entry.path), what="a journal", max_bytes=1 << 20))
            targets = [(Path(t), bool(e)) for t, e in listed]
        except Exception:  # noqa: BLE001 - a journal that is not ours to read: nothing to roll back from it
            targets = []
        _roll_back(Path(entry.path), targets, pid=int(pid))


def _roll_back(journal: Path, targets: list[tuple[Path, bool]], *, pid: int | None = None) -> None:
    """Each target back to its `.orig` (the file it was), or removed when it did not exist before (it was
    created); only while the journal stands, which says the group never committed."""
    if journal.exists():
        for path, existed in targets:
            original = _original(path, pid)
            with contextlib.suppress(OSError):
                if original.exists() or original.is_symlink():
                    os.replace(original, path)
                elif not existed:
                    path.unlink()
        with contextlib.suppress(OSError):
            journal.unlink()
    for path, _ in targets:
        with contextlib.suppress(OSError):
            _original(path, pid).unlink()
        if pid is not None:  # a killed writer's: its temporary files too
            _sweep_orphans(_folder(path), path.name)


def _keep_original(path: Path) -> bool:
    """A hard link to what is at `path` now (a file, or the link itself), under the `.orig` name; whether there
    was anything. A stale `.orig` of this pid (a recycled pid) is replaced."""
    if not (path.exists() or path.is_symlink()):
        return False
    with contextlib.suppress(FileNotFoundError):
        _original(path).unlink()
    os.link(path, _original(path), follow_symlinks=False)
    return True


def _original(path: Path, pid: int | None = None) -> Path:
    return path.with_name(f".{path.name}.accelwiz-{pid or os.getpid()}.orig")


def _refuse(path: Path, *, force: bool, create_parents: bool) -> None:
    if _is_symlink(path) and not force:
        raise link_refused(path)
    if is_dir(path) and not _is_symlink(path):
        raise WriteError(f"cannot write {path}: it is a directory; nothing was written", hint="pass a file name")
    ensure_folder(path, create_parents=create_parents, shown=path)


def _folder(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


@contextlib.contextmanager
def _term_as_interrupt() -> Iterator[None]:
    """SIGTERM raises `Interrupted` while the block runs (the main thread only: signals are delivered there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupted(signum: int, frame: object) -> None:
        raise Interrupted(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
