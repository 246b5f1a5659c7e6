"""Interrupted op builds: DeepSpeed JIT-compiles its ops through torch.utils.cpp_extension, which guards each
build with a `lock` file (torch/utils/file_baton.py, `FileBaton`): whoever creates it builds, everyone else polls
until it is gone. A build that is killed (Ctrl-C in the first minute of a first DeepSpeed run, an OOM kill, a
timed-out job) leaves the file behind, and every later process that needs the op waits for it forever, silently,
inside `deepspeed.init_distributed`: a hang with no message.

A build takes a minute or two, so a lock far older than that belongs to no running build. `run` removes such a lock
in the extensions folder the launch will use, and says so.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

# FileBaton's own file name (torch/utils/cpp_extension.py: `baton = FileBaton(os.path.join(build_directory, "lock"))`)
LOCK_NAME = "lock"
# An op build measured here took 30-90 s on 2 cores; ten minutes is no build still running.
STALE_AFTER_S = 600.0


def extensions_folder(environ: Mapping[str, str]) -> Path:
    """Where torch builds extensions for this environment: TORCH_EXTENSIONS_DIR, else torch's default
    (`~/.cache/torch_extensions/py311_cpu`, torch/utils/cpp_extension.py `_get_build_directory`): the parent of
    that default is returned, its build-named folders are searched."""
    from accelwiz.launch.environment import cache_home

    given = environ.get("TORCH_EXTENSIONS_DIR")
    return Path(given) if given else cache_home(environ) / "torch_extensions"


def stale_build_locks(folder: Path, *, older_than: float = STALE_AFTER_S, now: float | None = None) -> list[Path]:
    """The `lock` files of op builds under `folder` (two levels: `<build>/<op>/lock` or `<op>/lock`) untouched for
    longer than `older_than` seconds."""
    now = time.time() if now is None else now
    found = []
    for pattern in (f"*/{LOCK_NAME}", f"*/*/{LOCK_NAME}"):
        for lock in folder.glob(pattern):
            try:
                if lock.is_file() and not lock.is_symlink() and now - lock.lstat().st_mtime > older_than:
                    found.append(lock)
            except OSError:
                continue  # gone meanwhile, or unreadable: not ours to judge
    return sorted(found)


def clear_stale_build_locks(folder: Path, *, older_than: float = STALE_AFTER_S) -> list[Path]:
    """Remove the stale locks under `folder`; the ones removed."""
    removed = []
    for lock in stale_build_locks(folder, older_than=older_than):
        try:
            lock.unlink()
            removed.append(lock)
        except OSError:
            continue
    return removed
