"""Issue 30/31: the lines `run --print-node-commands` prints for a YAML without main_process_ip, pasted into a real
shell. Both parts of a line (`accelwiz doctor ... && accelerate launch ...`) read machine 0's address from the one
variable the note above the lines names; where it is not set, the line stops before anything starts, in one line
naming it, with bash's exit code (README "Exit codes"). MASTER_ADDR, which the doctor alone would also read, must
not let the doctor pass and the launch stop."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

TWO_NODES = "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_port: 29600\n"


@pytest.fixture()
def printed(cli, write, tmp_path, monkeypatch):
    """Each machine's line and what `run` said on stderr, for a YAML with no main_process_ip."""
    monkeypatch.chdir(tmp_path)
    write("mn.yaml", TWO_NODES)
    write("train.py", "")

    def _printed(*flags: str) -> tuple[list[str], str]:
        result = cli("run", "--config", "mn.yaml", "--print-node-commands", *flags, "train.py")
        assert result.exit_code == 0, result.stderr
        return result.stdout.splitlines(), result.stderr

    return _printed


def _bash(line: str, cwd, **env: str) -> subprocess.CompletedProcess:
    """`line` run by bash as a user's paste would be, without MAIN_PROCESS_IP unless given."""
    environ = {k: v for k, v in os.environ.items() if k not in ("MAIN_PROCESS_IP", "MASTER_ADDR")}
    return subprocess.run(["bash", "-c", line], cwd=cwd, env={**environ, **env}, capture_output=True, text=True,
                          timeout=120)


def test_the_note_says_once_which_variable_to_export(printed):
    lines, stderr = printed()
    assert len(lines) == 2
    notes = [line for line in stderr.splitlines() if "MAIN_PROCESS_IP" in line]
    assert len(notes) == 1, stderr
    assert "mn.yaml has no main_process_ip" in notes[0]
    assert "`export MAIN_PROCESS_IP=<address of machine 0>`" in notes[0] and "each of the 2 machines" in notes[0]


@pytest.mark.parametrize("flags", [(), ("--no-preflight",)])
def test_a_line_pasted_without_the_variable_stops_in_one_line_naming_it(printed, tmp_path, flags):
    lines, _ = printed(*flags)
    for line in lines:
        # MASTER_ADDR set: before, the doctor took it and passed, and only the launch part stopped
        ran = _bash(line, tmp_path, MASTER_ADDR="127.0.0.1")
        assert ran.returncode == 127, ran.stderr  # bash -c; documented in README "Exit codes"
        assert ran.stdout == ""  # nothing started: no doctor table, no launch
        said = ran.stderr.splitlines()
        assert len(said) == 1 and "MAIN_PROCESS_IP" in said[0], ran.stderr
        assert "export MAIN_PROCESS_IP=<address of machine 0>" in said[0]


def test_both_parts_read_the_address_from_the_same_variable(printed, tmp_path):
    """With the variable exported, the doctor and the launch get the same address. The two programs are bash
    functions that record their arguments: what is under test is the shell's expansion of the printed words."""
    lines, _ = printed()
    record = ('accelwiz() { printf "%s\\n" "$@" > doctor.args; }; '
              'accelerate() { printf "%s\\n" "$@" > launch.args; }; ')
    for rank, line in enumerate(lines):
        ran = _bash(record + line, tmp_path, MAIN_PROCESS_IP="10.1.2.3", MASTER_ADDR="10.9.9.9")
        assert ran.returncode == 0, ran.stderr
        doctor = (tmp_path / "doctor.args").read_text().splitlines()
        launch = (tmp_path / "launch.args").read_text().splitlines()
        assert doctor[doctor.index("--main-address") + 1] == "10.1.2.3"
        assert launch[launch.index("--main_process_ip") + 1] == "10.1.2.3"
        assert doctor[doctor.index("--node-rank") + 1] == launch[launch.index("--machine_rank") + 1] == str(rank)


def test_a_yaml_with_main_process_ip_needs_no_variable(printed, write):
    write("mn.yaml", TWO_NODES + "main_process_ip: 10.0.0.1\n")
    lines, stderr = printed()
    assert "MAIN_PROCESS_IP" not in stderr and "MAIN_PROCESS_IP" not in "".join(lines)
    doctor, launch = (shlex.split(part) for part in lines[0].split(" && "))
    assert doctor[doctor.index("--main-address") + 1] == launch[launch.index("--main_process_ip") + 1] == "10.0.0.1"


@pytest.mark.slow
def test_with_the_variable_exported_the_pasted_lines_train_as_one_world(tmp_path):
    """The user's path: the note's export on each "machine" (two process trees on loopback), then its line as
    printed. Both preflights pass and the two ranks train as one gloo world."""
    import json
    import sys
    import time

    from accelwiz.plan_file import dump_plan
    from tests.launch.test_multinode_loopback import TIMEOUT, child_env, cpu_pair_plan, stop
    from tests.ports import free_port

    (tmp_path / "accelerate.yaml").write_text(  # one process on each machine, as the plan says
        TWO_NODES.replace("num_processes: 4", "num_processes: 2").replace("29600", str(free_port())))
    (tmp_path / "accelerate.plan.yaml").write_text(dump_plan(cpu_pair_plan(None)))
    printed = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--model", "tiny", "--steps", "2",
                              "--print-node-commands"], cwd=tmp_path, env=child_env(), capture_output=True,
                             text=True, timeout=120)
    assert printed.returncode == 0 and "export MAIN_PROCESS_IP=" in printed.stderr, printed.stderr
    lines = printed.stdout.splitlines()
    env = {**child_env(), "MAIN_PROCESS_IP": "127.0.0.1"}
    logs = [tmp_path / f"node{rank}.log" for rank in (0, 1)]
    nodes = []
    try:
        for rank in (1, 0):
            with logs[rank].open("w") as log:
                nodes.append(subprocess.Popen(["bash", "-c", lines[rank]], cwd=tmp_path, env=env, stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + TIMEOUT
        codes = [node.wait(timeout=max(1.0, deadline - time.monotonic())) for node in nodes]
    finally:
        for node in nodes:
            stop(node)
    text = [log.read_text() for log in logs]
    assert codes == [0, 0], "\n".join(t[-3000:] for t in text)
    assert all("accelwiz preflight: 2 nodes ready" in t for t in text)
    report = json.loads((tmp_path / "accelwiz-run" / "run_report.json").read_text())
    assert report["world_size"] == 2 and sorted(r["node_rank"] for r in report["ranks"]) == [0, 1]
