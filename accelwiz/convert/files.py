"""Write the converted files both or neither: a YAML that names a JSON which could not be written would be
worse than no output."""

from __future__ import annotations

import contextlib
from pathlib import Path

from accelwiz.errors import InputError


def write_all(files: list[tuple[Path, str]]) -> None:
    """Write each (path, text) atomically, in order; if one fails, put back what the earlier ones replaced (or
    remove them) and raise an InputError naming the path that could not be written."""
    from accelwiz.atomic import atomic_write

    # A missing folder is refused before anything is written, as `run --slurm` and `migrate -o` refuse it: a
    # mistyped -o should not leave a new directory tree behind.
    for path, _ in files:
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InputError(f"cannot write {path}: the folder {folder} does not exist; nothing was written",
                             hint=f"create it first (mkdir -p {folder}), or pass -o in an existing folder")
    done: list[tuple[Path, str | None]] = []
    for path, text in files:
        try:
            if path.is_dir():
                raise IsADirectoryError(21, "is a directory")
            before = path.read_text(encoding="utf-8") if path.is_file() else None
            atomic_write(path, text, create_parents=False)
        except OSError as exc:
            for written, previous in reversed(done):
                with contextlib.suppress(OSError):
                    if previous is None:
                        written.unlink()
                    else:
                        atomic_write(written, previous)
            raise InputError(f"cannot write {path}: {exc.strerror or exc}; nothing was written",
                             hint="pass -o OUT in a folder you can write to") from None
        done.append((path, before))
