"""`execute`: exit codes pass through, signals reach the whole process group, nothing is left running.
(`accelwiz run` end to end, with torchrun's workers and a script's daemon: test_run_processes.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from accelwiz.launch.execute import execute

pytestmark = pytest.mark.slow

# A child that starts a grandchild (like accelerate launch starting workers), records its pid, then waits.
TREE = textwrap.dedent("""
    import subprocess, sys, time
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    open(sys.argv[1], "w").write(str(grandchild.pid))
    time.sleep(float(sys.argv[2]))
""")


def test_exit_code_passes_through():
    assert execute([sys.executable, "-c", "import sys; sys.exit(3)"]) == 3
    assert execute([sys.executable, "-c", "pass"]) == 0


def test_death_by_signal_is_128_plus_the_signal():
    assert execute([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]) == 143


def test_group_members_left_behind_are_terminated(tmp_path):
    pid_file = tmp_path / "pid"
    assert execute([sys.executable, "-c", TREE, str(pid_file), "0"], grace=2) == 0
    grandchild = int(pid_file.read_text())
    assert not _alive(grandchild)


def test_sigint_stops_the_whole_group(tmp_path):
    """Ctrl-C reaches the group as SIGTERM (quiet in every layer, see execute.py); run reports 130."""
    pid_file = tmp_path / "pid"
    runner = textwrap.dedent(f"""
        import sys
        from accelwiz.launch.execute import execute
        sys.exit(execute([sys.executable, "-c", {TREE!r}, {str(pid_file)!r}, "60"], grace=3))
    """)
    proc = subprocess.Popen([sys.executable, "-c", runner])
    deadline = time.monotonic() + 30
    while not (pid_file.is_file() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    assert not _alive(grandchild)


def test_workers_in_their_own_session_do_not_outlive_a_dying_launcher(tmp_path):
    """torchrun starts each worker with start_new_session=True, so killpg on the launcher's group misses them;
    a launcher that dies (OOM killer, a second Ctrl-C's SIGKILL) must not leave them training unsupervised."""
    pid_file = tmp_path / "pid"
    launcher = textwrap.dedent("""
        import os, signal, subprocess, sys, time
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        open(sys.argv[1], "w").write(str(worker.pid))
        time.sleep(1.5)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert execute([sys.executable, "-c", launcher, str(pid_file)], grace=2) == 128 + signal.SIGKILL
    assert not _alive(int(pid_file.read_text()))


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
