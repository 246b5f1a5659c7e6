"""Write the converted files both or neither: a YAML that names a JSON which could not be written would be
worse than no output."""

from __future__ import annotations

from pathlib import Path

from accelwiz.errors import InputError


def write_all(files: list[tuple[Path, str]], *, force: bool = False) -> None:
    """Write each (path, text) atomically, in order; if one fails, put back what the earlier ones replaced (or
    remove them) and raise the WriteError naming the path that could not be written (accelwiz.atomic_stage.write_all)."""
    from accelwiz.atomic_stage import write_all
    from accelwiz.launch.shell import quote  # the hint's command is pasted into a shell: a folder with a space

    # A missing folder is refused before anything is written, as `run --slurm` and `migrate -o` refuse it: a
    # mistyped -o should not leave a new directory tree behind.
    for path, _ in files:
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InputError(f"cannot write {path}: the folder {folder} does not exist; nothing was written",
                             hint=f"create it first (mkdir -p {quote(str(folder))}), or pass -o in an existing folder")
    write_all(files, create_parents=False, force=force)  # a link at a name: refused unless force, then replaced
