"""`accelerate launch`, run in-process by the process `accelwiz run` starts, so that the launch owns its processes
and its exit status is the failing rank's.

Takes exactly `accelerate launch`'s arguments (`python -m accelwiz.launch.launcher --config_file ... train.py`).

Exit status. accelerate loses it in two places: the simple launcher (one process) raises CalledProcessError
(accelerate/commands/launch.py `simple_launcher`), and torchrun raises ChildFailedError
(torch/distributed/elastic/multiprocessing/errors `ChildFailedError`), both ending `accelerate launch` with 1 and a
traceback. Both exceptions carry the worker's real status (negative for a signal); here the first failing rank's
(`ChildFailedError.get_first_failure`, by time) becomes this process's status, 128+N for signal N as a shell
reports it, with one line naming the rank instead of the traceback and torchrun's table.

Processes. This process makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER): whatever a worker leaves
behind, a `setsid`'d daemon included, is re-parented here instead of to init, and every process still below this
one when the launch ends (success, failure or signal) is terminated, then killed. torchrun's workers, started with
`start_new_session=True`, are children of this process too, since torchrun runs in it. `accelwiz run` starts this
process with PR_SET_PDEATHSIG=SIGTERM (execute.py), so a `kill -9` of `run` still ends the launch here, cleanly.
A SIGTERM (from `run` on Ctrl-C, from the parent's death, or from a scheduler) ends the launch quietly: torchrun
stops its workers on it, the simple launcher's worker shares our process group and gets it from `run`.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SWEEP_GRACE_SECONDS = 5.0


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@functools.lru_cache(maxsize=1)
def libc_prctl():  # noqa: ANN201 - the C function, or None
    """libc's prctl(2), looked up once (before any fork: a preexec_fn must not load libraries); None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def prctl(option: int, value: int) -> bool:
    """Linux prctl(2); False where it is not available (another OS), so callers degrade to what they had."""
    function = libc_prctl()
    return function is not None and function(option, value, 0, 0, 0) == 0


def status_of_signal_or_code(code: int) -> int:
    """A child's status as a shell shows it: Popen's -N (killed by signal N) is 128+N."""
    return 128 - code if code < 0 else code


def main(argv: list[str] | None = None) -> int:
    prctl(PR_SET_CHILD_SUBREAPER, 1)

    def stop(signum: int, _frame: object) -> None:
        raise _Stopped(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)  # torchrun replaces these with its own (which raise SignalException)
    from accelwiz.launch import watchdog

    guard = watchdog.start(os.environ)  # a rank stopped for minutes ends the job with EXIT_STALLED
    try:
        code = _launch(sys.argv[1:] if argv is None else argv)
        return watchdog.EXIT_STALLED if guard is not None and guard.found else code
    finally:
        if guard is not None:
            guard.stop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second signal must not cut the sweep short
        sweep_children()


def _launch(argv: list[str]) -> int:
    import subprocess

    from accelerate.commands.launch import launch_command, launch_command_parser
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    args = launch_command_parser().parse_args(argv)
    _quiet_shutdown_logs()
    _simple_launcher_without_pipe()
    try:
        launch_command(args)
    except ChildFailedError as exc:
        rank, failure = exc.get_first_failure()
        code = status_of_signal_or_code(failure.exitcode)
        how = f"signal {failure.signal_name()}" if failure.exitcode < 0 else f"status {failure.exitcode}"
        print(f"accelwiz: rank {rank} (pid {failure.pid}) failed first, with {how}; exit {code}", file=sys.stderr)
        return code
    except subprocess.CalledProcessError as exc:
        return status_of_signal_or_code(exc.returncode)
    except SignalException as exc:
        return 128 + int(exc.sigval)
    except _Stopped as exc:
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    return 0


def _simple_launcher_without_pipe() -> None:
    """The one-process launch, with the worker writing to our stderr itself.

    accelerate 1.16's simple launcher tees the worker's stderr through a pipe (commands/launch.py `_run_subprocess`,
    reading until EOF). Whatever the script leaves behind (a `setsid`'d daemon, a data-loading server) inherits the
    pipe's write end, so EOF never comes and the launch waits for that process: for a server, forever, after the
    training itself has ended. The worker here inherits our stderr, as accelerate's launcher did before 1.16; the
    sweep after the launch (`sweep_children`) then ends what the script left. Its status reaches `_launch` as
    accelerate's own CalledProcessError, exit 1 with `--quiet`.
    """
    import subprocess

    import accelerate.commands.launch as accelerate_launch

    if not hasattr(accelerate_launch, "_run_subprocess"):  # another accelerate: its launcher, as it is
        return

    def run_subprocess(cmd: list[str], current_env: dict[str, str], quiet: bool) -> None:
        process = subprocess.Popen(cmd, env=current_env)
        process.wait()
        if process.returncode != 0:
            if quiet:
                sys.exit(1)
            raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)

    accelerate_launch._run_subprocess = run_subprocess


# torch elastic's own lines about stopping (agent/server/api.py "Received %s death signal, shutting down
# workers", multiprocessing/api.py "Sending process %s closing signal %s"): after Ctrl-C, `run` says it in one line.
_SHUTDOWN_LOGS = ("torch.distributed.elastic.agent.server.api", "torch.distributed.elastic.multiprocessing.api")


def _quiet_shutdown_logs() -> None:
    import logging

    def keep(record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return not ("death signal" in text or "closing signal" in text)

    for name in _SHUTDOWN_LOGS:
        logging.getLogger(name).addFilter(keep)


def sweep_children(grace: float = SWEEP_GRACE_SECONDS) -> None:
    """Terminate, then kill, every process below this one (re-parented daemons included), and reap them."""
    import psutil

    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            below = psutil.Process().children(recursive=True)
        except psutil.Error:
            return
        living = [p for p in below if _running(p)]
        if not living:
            break
        for process in living:
            with contextlib.suppress(psutil.Error):
                process.send_signal(signum)
        end = time.monotonic() + (grace if signum == signal.SIGTERM else 5.0)
        while any(_running(p) for p in living) and time.monotonic() < end:
            _reap()
            time.sleep(0.05)
    _reap()


def _running(process) -> bool:  # noqa: ANN001 - a psutil.Process
    import psutil

    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _reap() -> None:
    """Collect exited children (re-parented orphans are ours to wait for)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


if __name__ == "__main__":
    sys.exit(main())
