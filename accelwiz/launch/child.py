"""Runs a user's script inside each training process and records its exit status for `accelwiz run`.

`accelerate launch` reports any failing script as its own exit status 1 (the simple launcher raises
CalledProcessError, torchrun raises ChildFailedError), so `sys.exit(3)` in a script would reach the shell as 1.
`accelwiz run` therefore launches `-m accelwiz.launch.child SCRIPT ARGS`: the script runs as `__main__` exactly as
`python SCRIPT ARGS` would, and its status is written to `$ACCELWIZ_EXIT_DIR/rank-<RANK>` for `run` to return.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

# the status file protocol is shared with the built-in trainer, which records its own: one owner below both
from accelwiz.rank_status import EXIT_DIR_ENV, record_status, recorded_status, status_of  # noqa: F401


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m accelwiz.launch.child SCRIPT [ARGS...]")
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    import os

    from accelwiz.trainer.library_notices import quiet_unused_libraries

    # a script's `accelerator.unwrap_model` imports deepspeed whenever it is installed, as the built-in trainer's
    # does: the same one DeepSpeed line is dropped where the launch is not DeepSpeed (trainer/library_notices.py)
    quiet_unused_libraries(uses_deepspeed=os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true")
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
