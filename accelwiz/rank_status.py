"""Each training process's exit status, as a file: `$ACCELWIZ_EXIT_DIR/rank-<RANK>`.

`accelerate launch` reports any failing worker as its own exit status 1, so the processes `accelwiz run` starts
write their real status here (a user script through launch/child.py, the built-in trainer in its `entry`) and
`run` returns it. Writers and the reader share this one module, below the launch and the trainer.
"""

from __future__ import annotations

import os
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
