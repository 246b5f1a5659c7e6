"""Runs a user's script inside each training process and records its exit status for `accelwiz run`.

`accelerate launch` reports any failing script as its own exit status 1 (the simple launcher raises
CalledProcessError, torchrun raises ChildFailedError), so `sys.exit(3)` in a script would reach the shell as 1.
`accelwiz run` therefore launches `-m accelwiz.launch.child SCRIPT ARGS`: the script runs as `__main__` exactly as
`python SCRIPT ARGS` would, and its status is written to `$ACCELWIZ_EXIT_DIR/rank-<RANK>` for `run` to return.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

EXIT_DIR_ENV = "ACCELWIZ_EXIT_DIR"


def status_of(exc: SystemExit) -> int:
    """The process exit status Python gives a SystemExit: None is 0, an int is itself, anything else 1."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def recorded_status(directory: Path) -> int | None:
    """The first non-zero status in rank order, 0 if every rank recorded 0, None if none recorded anything."""
    from accelwiz.document.read import read_bytes
    from accelwiz.errors import InputError

    statuses = []
    # only rank-<digits>, read bounded: a script writes what it likes into $ACCELWIZ_EXIT_DIR (rank-x crashed run)
    ranked = [p for p in directory.glob("rank-*") if p.name[5:].isdigit() and len(p.name) < 16]
    for path in sorted(ranked, key=lambda p: int(p.name[5:])):
        try:
            statuses.append(int(read_bytes(path, what="a rank's exit status", max_bytes=64).strip()))
        except (InputError, ValueError):
            continue
    if not statuses:
        return None
    return next((s for s in statuses if s != 0), 0)


def record_status(status: int) -> None:
    """This rank's exit status as `rank-<RANK>` in $ACCELWIZ_EXIT_DIR (set by `accelwiz run`; absent under a bare
    `accelerate launch`), written whole: `recorded_status` never reads half a number."""
    directory = os.environ.get(EXIT_DIR_ENV)
    if directory:
        from accelwiz.atomic import atomic_write

        atomic_write(Path(directory, f"rank-{os.environ.get('RANK', '0')}"), f"{status}\n")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m accelwiz.launch.child SCRIPT [ARGS...]")
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, str(Path(script).resolve().parent))  # as `python SCRIPT` puts the script's directory first
    status = 1
    try:
        runpy.run_path(script, run_name="__main__")
        status = 0
    except SystemExit as exc:
        status = status_of(exc)
        raise
    finally:
        record_status(status)


if __name__ == "__main__":
    main()
