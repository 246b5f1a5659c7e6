"""The one place accelwiz starts a process: `accelerate launch`, in its own process group.

The child gets a new session so that signals reach the launcher and whatever shares its group through one
`killpg`, and so that nothing is left behind: the first SIGINT/SIGTERM/SIGHUP is forwarded to the group, the group
is killed if it has not exited after a grace period (or on a second signal), and any member still alive after the
launcher exits is terminated too.

torchrun (accelerate's multi-process launcher) starts each worker with `start_new_session=True`, outside that
group: the launcher stops them itself when signalled, but not when it is SIGKILLed or dies first. So the
launcher's descendants are also remembered as they appear (`_Descendants`), and handled like the group.

A signal from the terminal (Ctrl-C) or the system is passed on as SIGTERM: the polite stop every layer ends on
quietly (torchrun stops its workers, Python workers die without a KeyboardInterrupt traceback each), where SIGINT
gave a traceback per process. And if `run` itself dies without a chance to act (`kill -9`, the OOM killer), the
kernel sends the child SIGTERM (PR_SET_PDEATHSIG, set between fork and exec): the launch still ends, and the
launcher (launch/launcher.py, a child subreaper) takes everything below it down with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

import psutil

from accelwiz.errors import LaunchError

GRACE_SECONDS = 15.0
# How often the launcher's process tree is re-read (a /proc walk, about a millisecond).
DESCENDANTS_REFRESH_SECONDS = 0.5
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def execute(argv: Sequence[str], env: Mapping[str, str] | None = None, *, grace: float = GRACE_SECONDS,
            received: list[int] | None = None) -> int:
    """Run argv to completion and return its exit code (128+N when it or we ended it with signal N). The signals
    `run` received meanwhile are appended to `received`."""
    try:
        child = subprocess.Popen(list(argv), env=dict(env) if env is not None else None, start_new_session=True,
                                 preexec_fn=_dies_with(os.getpid()))
    except OSError as exc:
        raise LaunchError(
            f"cannot start `{argv[0]}`: {exc.strerror or exc}",
            hint="install the training extras: pip install 'accelwiz[train]'",
        ) from None
    received = [] if received is None else received
    deadline: list[float] = []
    descendants = _Descendants(child.pid)

    def kill_now() -> None:
        descendants.refresh()
        _signal_group(child.pid, signal.SIGKILL)
        descendants.send(signal.SIGKILL)

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) == 1:
            deadline.append(time.monotonic() + grace)
            _signal_group(child.pid, signal.SIGTERM)  # the launcher stops its workers and waits for them
        else:  # a second Ctrl-C means "now"
            kill_now()

    previous = _install(forward)
    try:
        next_refresh = 0.0
        while True:
            if time.monotonic() >= next_refresh:
                descendants.refresh()
                next_refresh = time.monotonic() + DESCENDANTS_REFRESH_SECONDS
            try:
                code = child.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if deadline and time.monotonic() > deadline[0]:
                    kill_now()
    finally:
        _restore(previous)
        terminate_group(child.pid, grace, descendants)
    if received:
        return 128 + received[0]
    return code if code >= 0 else 128 - code


def _dies_with(parent: int):  # noqa: ANN202
    """A preexec_fn: the child gets SIGTERM when `parent` dies, and stops at once if it already has (the window
    between fork and prctl)."""
    from accelwiz.launch.launcher import PR_SET_PDEATHSIG, libc_prctl, prctl

    libc_prctl()  # looked up here, in the parent

    def preexec() -> None:
        if prctl(PR_SET_PDEATHSIG, signal.SIGTERM) and os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def terminate_group(pgid: int, grace: float, descendants: _Descendants | None = None) -> None:
    """SIGTERM whatever is left in the group (and of `descendants`), then SIGKILL after `grace` seconds."""

    def alive() -> bool:
        return _group_alive(pgid) or bool(descendants and descendants.alive())

    if not alive():
        return
    _signal_group(pgid, signal.SIGTERM)
    if descendants:
        descendants.send(signal.SIGTERM)
    end = time.monotonic() + grace
    while alive() and time.monotonic() < end:
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)
    if descendants:
        descendants.send(signal.SIGKILL)


class _Descendants:
    """Every process seen below the launcher so far, even after it is orphaned (psutil.Process objects refuse
    to signal a recycled pid)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, psutil.Process] = {}

    def refresh(self) -> None:
        try:
            found = psutil.Process(self.root).children(recursive=True)
        except psutil.Error:  # the launcher is gone: keep what was seen before
            return
        for process in found:
            self.seen.setdefault(process.pid, process)

    def alive(self) -> list[psutil.Process]:
        living = []
        for process in self.seen.values():
            with contextlib.suppress(psutil.Error):
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    living.append(process)
        return living

    def send(self, signum: int) -> None:
        for process in self.alive():
            with contextlib.suppress(psutil.Error):
                process.send_signal(signum)


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
