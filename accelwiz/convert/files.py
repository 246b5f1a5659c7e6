"""Write the converted files both or neither: a YAML that names a JSON which could not be written would be
worse than no output."""

from __future__ import annotations

import contextlib
from pathlib import Path

from accelwiz.errors import AccelwizError, InputError


def write_all(files: list[tuple[Path, str]]) -> None:
    """Write each (path, text) atomically, in order; if one fails, put back what the earlier ones replaced (or
    remove them) and raise an InputError naming the path that could not be written."""
    from accelwiz.atomic import atomic_write, resolve_target
    from accelwiz.document.read import read_bytes

    # A missing folder is refused before anything is written, as `run --slurm` and `migrate -o` refuse it: a
    # mistyped -o should not leave a new directory tree behind.
    for path, _ in files:
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InputError(f"cannot write {path}: the folder {folder} does not exist; nothing was written",
                             hint=f"create it first (mkdir -p {folder}), or pass -o in an existing folder")
    done: list[tuple[Path, bytes | None]] = []
    for path, text in files:
        try:
            if path.is_dir():
                raise InputError(f"cannot write {path}: is a directory; nothing was written",
                                 hint="pass -o OUT naming a file")
            before = read_bytes(resolve_target(path), what="the file to replace") if path.is_file() else None
            atomic_write(path, text, create_parents=False)
        except AccelwizError:
            for written, previous in reversed(done):
                with contextlib.suppress(OSError, AccelwizError):
                    if previous is None:
                        resolve_target(written).unlink()
                    else:
                        atomic_write(written, previous)
            raise
        done.append((path, before))
