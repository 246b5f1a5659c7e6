"""The one atomic file writer: a reader sees the old file or the whole new one, never half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str, *, create_parents: bool = True) -> None:
    """Write `text` to `path` through a temporary file in the same directory and `os.replace`.

    The new file keeps the mode of the file it replaces (or what the umask allows for a new one); on any
    failure the temporary file is removed and the old file is untouched. Missing folders are created unless
    `create_parents` is False (then an OSError says the folder is missing).
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if create_parents:
        directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates 0600; give the file the mode it had, or what the umask allows for a new file.
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
