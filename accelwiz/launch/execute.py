"""The one place accelwiz starts a process: `accelerate launch`, in its own process group.

The child gets a new session so that signals reach the whole tree (the launcher and every training worker)
through one `killpg`, and so that nothing is left behind: the first SIGINT/SIGTERM/SIGHUP is forwarded to the
group, the group is killed if it has not exited after a grace period (or on a second signal), and any member
still alive after the launcher exits is terminated too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

from accelwiz.errors import LaunchError

GRACE_SECONDS = 15.0
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def execute(argv: Sequence[str], env: Mapping[str, str] | None = None, *, grace: float = GRACE_SECONDS) -> int:
    """Run argv to completion and return its exit code (128+N when it or we ended it with signal N)."""
    try:
        child = subprocess.Popen(list(argv), env=dict(env) if env is not None else None, start_new_session=True)
    except OSError as exc:
        raise LaunchError(
            f"cannot start `{argv[0]}`: {exc.strerror or exc}",
            hint="install the training extras: pip install 'accelwiz[train]'",
        ) from None
    received: list[int] = []
    deadline: list[float] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) == 1:
            deadline.append(time.monotonic() + grace)
            _signal_group(child.pid, signum)
        else:  # a second Ctrl-C means "now"
            _signal_group(child.pid, signal.SIGKILL)

    previous = _install(forward)
    try:
        while True:
            try:
                code = child.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if deadline and time.monotonic() > deadline[0]:
                    _signal_group(child.pid, signal.SIGKILL)
    finally:
        _restore(previous)
        terminate_group(child.pid, grace)
    if received:
        return 128 + received[0]
    return code if code >= 0 else 128 - code


def terminate_group(pgid: int, grace: float) -> None:
    """SIGTERM whatever is left in the group, then SIGKILL after `grace` seconds."""
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    end = time.monotonic() + grace
    while _group_alive(pgid) and time.monotonic() < end:
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)


def _install(handler):  # noqa: ANN001, ANN202
    previous = {}
    for signum in FORWARDED_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread: signals cannot be caught here; the group is still reaped
            break
    return previous


def _restore(previous) -> None:  # noqa: ANN001
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
