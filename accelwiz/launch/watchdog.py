"""A watchdog for a stopped rank (issue 32 Build 5), run inside the launcher (launch/launcher.py).

When one rank stops (SIGSTOP, a debugger's stop, a job-control stop), the other ranks wait for it at their next
collective, and the job hangs silently until NCCL's or gloo's timeout (30 minutes by default) or forever. The
launcher owns every worker (they are its descendants), so it sees a worker in the stopped state directly. After
`ACCELWIZ_STALL_TIMEOUT` seconds (default 300; 0 turns the watchdog off) of one rank stopped, it names the rank
and its pid in one line and ends the job, whose status is then EXIT_STALLED (124, as `timeout(1)` reports a
command it ended), distinct from any signal's 128+N.

What it does not see: a rank that runs but makes no progress (a deadlock in the script, an infinite loop); that
needs the ranks' own heartbeats.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Mapping

STALL_ENV = "ACCELWIZ_STALL_TIMEOUT"
DEFAULT_STALL_S = 300.0
EXIT_STALLED = 124
POLL_S = 1.0


def stall_timeout(environ: Mapping[str, str]) -> float:
    """The seconds a rank may stay stopped; 0 (off) for a value that is not a number >= 0."""
    raw = environ.get(STALL_ENV, "").strip()
    if not raw:
        return DEFAULT_STALL_S
    try:
        value = float(raw)
    except ValueError:
        print(f"accelwiz: {STALL_ENV}={raw!r} is not a number of seconds; the stopped-rank watchdog is off",
              file=sys.stderr)
        return 0.0
    return value if value >= 0 else 0.0


class Watchdog(threading.Thread):
    """Polls this process's descendants; ends every rank when one stays stopped (the launch then returns)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(name="accelwiz-watchdog", daemon=True)
        self.timeout = timeout
        self.finished = threading.Event()
        self.found: str | None = None

    def run(self) -> None:
        import psutil

        stopped_since: dict[int, float] = {}
        while not self.finished.wait(POLL_S):
            now = time.monotonic()
            for process in _workers(psutil):
                pid = process.pid
                if _stopped(process, psutil):
                    since = stopped_since.setdefault(pid, now)
                    if now - since >= self.timeout:
                        self._end(process, now - since)
                        return
                else:
                    stopped_since.pop(pid, None)

    def _end(self, process, seconds: float) -> None:  # noqa: ANN001 - a psutil.Process
        rank = _rank(process)
        self.found = (f"accelwiz: rank {rank} (pid {process.pid}) has been stopped for {seconds:.0f} s while the "
                      f"other ranks wait for it ({STALL_ENV}={self.timeout:g}); ending the job, exit {EXIT_STALLED}")
        print(self.found, file=sys.stderr, flush=True)
        import psutil

        # every rank ends: torchrun then reports the failed workers and the launcher returns EXIT_STALLED (a
        # signal to the launcher itself could meet a default handler outside torchrun and lose the status)
        for worker in _workers(psutil):
            with contextlib.suppress(psutil.Error):
                worker.send_signal(signal.SIGTERM)
                worker.send_signal(signal.SIGCONT)  # a stopped process acts on SIGTERM only once it runs again

    def stop(self) -> None:
        self.finished.set()


def start(environ: Mapping[str, str]) -> Watchdog | None:
    timeout = stall_timeout(environ)
    if timeout <= 0:
        return None
    watchdog = Watchdog(timeout)
    watchdog.start()
    return watchdog


def _workers(psutil):  # noqa: ANN001, ANN202 - the psutil module; its Processes
    try:
        below = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    return [p for p in below if _rank(p) is not None]


def _rank(process) -> str | None:  # noqa: ANN001 - a psutil.Process
    try:
        return process.environ().get("RANK")
    except Exception:  # noqa: BLE001 - psutil.Error or a process gone between the listing and the read
        return None


def _stopped(process, psutil) -> bool:  # noqa: ANN001
    try:
        return process.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
    except psutil.Error:
        return False
