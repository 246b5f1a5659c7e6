"""Issue 21.4, with real processes: `accelwiz run` -> launch/launcher.py (accelerate launch in-process) ->
torchrun's workers (or the simple launcher's one) -> whatever a script starts.

Nothing outlives the run: not after a `kill -9` of `run` itself, not a script's `setsid`'d daemon. The first
failing rank's exit status comes back (a rank exiting 4, os._exit(5), a segfault as 139), where `accelerate
launch` alone says 1. Ctrl-C ends with 130 and one line, no traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow

# CPU DDP here; a free port of accelerate's choosing (29500 may be another launch's on a shared machine)
TWO = "distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 2\nmain_process_port: 0\nmixed_precision: 'no'\n"
ONE = "distributed_type: 'NO'\nnum_processes: 1\nmixed_precision: 'no'\n"
START_S = 240  # generous: worker start-up on a shared 2-core machine

# Each worker records its pid; rank 0 starts a daemon (fork, setsid, as daemon(3) does) that records its own.
# Then rank 1 does what argv[2] says, and everyone else sleeps (ten minutes: only a stop ends them in time).
SCRIPT = """\
import ctypes, os, subprocess, sys, time
from pathlib import Path

rank, pids, what = os.environ.get("RANK", "0"), Path(sys.argv[1]), sys.argv[2]
if rank == "0":
    subprocess.Popen([sys.executable, "-c", "import os, sys, time\\nif os.fork(): sys.exit(0)\\nos.setsid()\\n"
                      "open(sys.argv[1], 'w').write(str(os.getpid()))\\ntime.sleep(600)", str(pids / "daemon")])
    while not (pids / "daemon").is_file():  # running before this worker goes on
        time.sleep(0.05)
(pids / f"worker-{rank}").write_text(str(os.getpid()))
print(f"ready {rank}", file=sys.stderr, flush=True)
if rank == os.environ.get("FAILING_RANK", "1"):
    if what == "exit4":
        sys.exit(4)
    if what == "os_exit5":
        os._exit(5)
    if what == "segfault":
        ctypes.string_at(0)
    if what == "done":
        sys.exit(0)
time.sleep(600)
"""


def start_run(tmp_path: Path, config: str, what: str, processes: int, **env: str) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "c.yaml").write_text(config)
    (tmp_path / "tree.py").write_text(SCRIPT)
    pids = tmp_path / "pids"
    pids.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "RANK"))}
    # output to a file, not a pipe: a surviving daemon would hold a pipe open and hang the test instead of failing it
    with (tmp_path / "run.log").open("w") as log:
        run = subprocess.Popen([sys.executable, "-m", "accelwiz", "run", "--config", "c.yaml", "tree.py", "--",
                                str(pids), what], cwd=tmp_path, env={**environ, "OMP_NUM_THREADS": "1", **env},
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return run, pids


def finish(run: subprocess.Popen, pids: Path, timeout: float) -> str:
    """Wait for `run`; its output (run talks on stderr; the workers print their `ready` lines there too)."""
    run.wait(timeout=timeout)
    return (pids.parent / "run.log").read_text()


def wait_for(pids: Path, names: list[str], run: subprocess.Popen) -> dict[str, int]:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline and run.poll() is None:
        if all((pids / n).is_file() and (pids / n).read_text() for n in names):
            return {n: int((pids / n).read_text()) for n in names}
        time.sleep(0.2)
    run.kill()
    pytest.fail(f"not started: {sorted(p.name for p in pids.iterdir())}\n{finish(run, pids, 60)[-3000:]}")


def recorded(pids: Path) -> dict[str, int]:
    return {p.name: int(p.read_text()) for p in pids.iterdir() if p.read_text()}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def survivors(pids: dict[str, int], within: float = 30.0) -> list[str]:
    """The recorded processes still running after `within` seconds (each is given that long to go)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(alive(p) for p in pids.values()):
        time.sleep(0.2)
    left = [name for name, pid in pids.items() if alive(pid)]
    for name in left:  # never leave them behind ourselves
        os.kill(pids[name], signal.SIGKILL)
    return left


def test_kill_9_of_run_leaves_no_worker_and_no_daemon(tmp_path: Path):
    run, pids = start_run(tmp_path, TWO, "sleep", 2)
    started = wait_for(pids, ["worker-0", "worker-1", "daemon"], run)
    launcher = [p.pid for p in psutil.Process(run.pid).children()]
    os.kill(run.pid, signal.SIGKILL)  # run gets no chance to clean up
    run.wait()
    assert survivors({**started, **{f"launcher-{pid}": pid for pid in launcher}}) == []


def test_a_scripts_setsid_daemon_does_not_survive_the_run(tmp_path: Path):
    run, pids = start_run(tmp_path, ONE, "done", 1, FAILING_RANK="0")
    stderr = finish(run, pids, START_S)
    assert run.returncode == 0, stderr
    started = recorded(pids)
    assert set(started) == {"worker-0", "daemon"}
    assert survivors(started, within=5) == []


@pytest.mark.parametrize(("config", "what", "code"), [
    (TWO, "exit4", 4),          # torchrun: rank 1 exits 4 while rank 0 sleeps
    (TWO, "os_exit5", 5),       # no Python exit path: launch/child.py records nothing, torchrun knows it
    (TWO, "segfault", 139),     # killed by SIGSEGV: 128 + 11, as a shell says
    (ONE, "segfault", 139),     # the simple launcher (one process)
])
def test_the_first_failing_ranks_status_comes_back(tmp_path: Path, config: str, what: str, code: int):
    processes = 2 if config is TWO else 1
    run, pids = start_run(tmp_path, config, what, processes, FAILING_RANK=str(processes - 1))
    stderr = finish(run, pids, START_S + 60)
    assert run.returncode == code, stderr[-3000:]
    assert "Traceback" not in stderr and "ChildFailedError" not in stderr, stderr[-3000:]
    if processes == 2:
        assert f"rank 1 (pid {recorded(pids)['worker-1']}) failed first" in stderr
    assert survivors(recorded(pids), within=10) == []


def test_ctrl_c_ends_with_130_and_one_line(tmp_path: Path):
    run, pids = start_run(tmp_path, TWO, "sleep", 2)
    started = wait_for(pids, ["worker-0", "worker-1", "daemon"], run)
    os.kill(run.pid, signal.SIGINT)  # what the terminal sends the foreground process on Ctrl-C
    stderr = finish(run, pids, 120)
    assert run.returncode == 130, stderr[-3000:]
    lines = stderr.splitlines()
    after = lines[max(i for i, line in enumerate(lines) if line.startswith("ready ")) + 1:]  # once both ran
    assert [line for line in after if line.strip()] == ["error: interrupted: the training processes were stopped "
                                                        "(exit 130)"], stderr[-3000:]
    assert survivors(started) == []
