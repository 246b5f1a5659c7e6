"""A real SLURM cluster on this machine: munged, slurmctld and two slurmd nodes (two NodeNames on 127.0.0.1 with
their own ports, `slurmd -N NAME`), all configured from a slurm.conf in a temporary directory with plugins that
work in a container (proctrack/linuxproc, task/none, no cgroup, no accounting).

The sbatch script `accelwiz run --slurm` writes for a 2-machine CPU config (no main_process_ip: the plan says
SLURM supplies it; the default c10d rendezvous) is submitted with `sbatch --wait`; the job exits 0 and the run
report has a rank on each node. A job whose rank 1 fails at once ends, FAILED, within a minute. One cluster serves
every test of the module. Debian's slurm-wlm and munge are installed with apt when missing; without root or apt the test skips, saying why.
Every daemon started here is stopped by its PID at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest

from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining, dump_plan
from tests.apt import ensure_programs
from tests.ports import free_port

# one worker runs the whole module under pytest-xdist (`--dist loadgroup`), so one cluster serves both tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("slurm-cluster")]

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "srun")
STEPS = 3




def ensure_slurm_installed() -> None:
    """Debian's slurm-wlm and munge, installed with apt when missing; skip (with the reason) when that fails."""
    ensure_programs(DAEMONS, ["slurm-wlm", "munge"])


@dataclass
class Cluster:
    directory: Path
    env: dict[str, str]
    daemons: list[subprocess.Popen] = field(default_factory=list)

    def start(self, name: str, argv: list[str]) -> None:
        log = (self.directory / f"{name}.out").open("w")
        self.daemons.append(subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                             start_new_session=True))
        log.close()

    def stop(self) -> None:
        """Every daemon started here, by its PID: TERM, then KILL what is left, and reap them."""
        for daemon in reversed(self.daemons):
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
        for daemon in reversed(self.daemons):
            try:
                daemon.wait(timeout=15)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.directory.glob("*.out"))
                         if p.stat().st_size)


SLURM_CONF = """\
ClusterName=accelwiz
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={controller_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={dir}/munge.socket
CredType=cred/munge
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool-%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd-%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MinJobAge=16
NodeName=node1 NodeAddr=127.0.0.1 NodeHostname={host} Port={node1_port} CPUs={cpus} State=UNKNOWN
NodeName=node2 NodeAddr=127.0.0.1 NodeHostname={host} Port={node2_port} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
"""


# MinJobAge=16 (default 300): `sbatch --wait` polls after 2 s, then every 8 s while 8 < MinJobAge / 2 fails (slurm's
# src/sbatch/sbatch.c, _job_wait: the interval grows x4 only while it is under half of MinJobAge, so a finished job
# is never purged before sbatch looks again); with the default it slept 2, 8, then 32 s, and a 15 s job waited 42.
# A finished job's record stays at least 16 s for `scontrol show job`, read right after sbatch returns.


@contextlib.contextmanager
def slurm_cluster(directory: Path) -> Iterator[Cluster]:
    """munged, slurmctld and two slurmd nodes configured in `directory`; stopped by PID on the way out."""
    (directory / "state").mkdir(parents=True)
    key = directory / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = directory / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=socket.gethostname().split(".")[0], dir=directory,
                                      controller_port=free_port(), node1_port=free_port(), node2_port=free_port(),
                                      cpus=os.cpu_count() or 1))
    env = {**os.environ, "SLURM_CONF": str(conf),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("SLURM_JOB", "ACCELERATE_"))}
    running = Cluster(directory, env)
    try:
        running.start("munged", ["munged", "--foreground", "--force", f"--socket={directory}/munge.socket",
                                 f"--key-file={key}", f"--pid-file={directory}/munged.pid",
                                 f"--seed-file={directory}/munged.seed", f"--log-file={directory}/munged.log"])
        wait_until(lambda: (directory / "munge.socket").exists(), "munged's socket", running)
        running.start("slurmctld", ["slurmctld", "-D", "-i"])
        running.start("slurmd-node1", ["slurmd", "-D", "-N", "node1"])
        running.start("slurmd-node2", ["slurmd", "-D", "-N", "node2"])
        wait_until(lambda: idle_nodes(env) == 2, "two idle nodes in sinfo", running)
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for every test here (it takes seconds to start and stop): each test submits its own job."""
    ensure_slurm_installed()
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


def idle_nodes(env: dict[str, str]) -> int:
    shown = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True, timeout=20)
    return shown.stdout.split().count("idle") if shown.returncode == 0 else 0


class ClusterDidNotStart(RuntimeError):
    pass


def wait_until(ready, what: str, running: Cluster, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if any(d.poll() is not None for d in running.daemons):
            break
        time.sleep(0.5)
    raise ClusterDidNotStart(f"the test cluster did not come up ({what}):\n{running.logs()}")


def write_two_node_config(work: Path) -> None:
    """A 2-machine CPU config and its SLURM plan in `work`: no main_process_ip (SLURM gives it), and the default
    c10d rendezvous, both nodes' launchers on this one host (only node 0 hosts the store: command.failure_flags)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "accelerate.yaml").write_text(
        f"distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 2\nmachine_rank: 0\n"
        f"main_process_port: {free_port()}\nmixed_precision: 'no'\nuse_cpu: false\n")
    (work / "accelerate.plan.yaml").write_text(dump_plan(PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml"),
        system=PlanSystem(name="cpu-pair", machines=2, gpus_per_machine=0, host_memory_bytes=8 * 2**30),
        launcher=PlanLauncher(kind="slurm"),
        model=PlanModel(name="tiny"),
        training=PlanTraining(micro_batch=2, sequence_length=32, precision="fp32"),
    )))


def submit(cluster: Cluster, work: Path, *run_args: str) -> dict:
    """`accelwiz run --slurm job.sbatch RUN_ARGS` in `work`, then `sbatch --wait`: the script, the job's exit
    status, id and end time, and the logs."""
    written = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--slurm", "job.sbatch", *run_args],
                             cwd=work, env=cluster.env, capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    started = time.monotonic()
    job = subprocess.run(["sbatch", "--parsable", "--wait", "job.sbatch"], cwd=work, env=cluster.env,
                         capture_output=True, text=True, timeout=480)
    ended, wall = time.time(), time.monotonic() - started
    outputs = "\n".join(p.read_text()[-4000:] for p in work.glob("accelwiz-*.out"))
    return {"script": (work / "job.sbatch").read_text(), "code": job.returncode, "wall_s": wall, "ended": ended,
            "job_id": job.stdout.strip().split(";")[0], "logs": f"{job.stdout}{job.stderr}\n{outputs}\n{cluster.logs()}"}


def job_state(cluster: Cluster, job_id: str) -> dict[str, str]:
    """JobState, ExitCode, ... of a finished job, from slurmctld's memory (no accounting database here). `sbatch
    --wait` can return while slurmctld still shows the job COMPLETING (the other node's processes being reaped, slow
    on a loaded machine): read again until it settles, for up to 30 s."""
    deadline = time.monotonic() + 30
    while True:
        shown = subprocess.run(["scontrol", "show", "job", job_id, "-o"], env=cluster.env, capture_output=True,
                               text=True, timeout=20, check=True)
        state = dict(field.split("=", 1) for field in shown.stdout.split() if "=" in field)
        if state.get("JobState") != "COMPLETING" or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def test_sbatch_script_runs_on_a_two_node_cluster(cluster: Cluster, tmp_path: Path):
    work = tmp_path / "work"
    write_two_node_config(work)
    checked = subprocess.run([sys.executable, "-m", "accelwiz", "check", "accelerate.yaml", "--select", "AW1"],
                             cwd=work, env=cluster.env, capture_output=True, text=True, timeout=120)
    # the plan says SLURM supplies the rendezvous: no AW104 in check
    assert checked.returncode == 0 and "AW104" not in checked.stdout, checked.stdout
    ran = submit(cluster, work, "--steps", str(STEPS))
    script = ran["script"]
    assert "#SBATCH --nodes=2" in script and "--gpus-per-node" not in script and str(Path.home()) not in script
    assert "--rdzv_backend c10d" in script and "#SBATCH --time=" in script
    assert ran["code"] == 0, ran["logs"]
    report = json.loads((work / "accelwiz-run" / "run_report.json").read_text())
    assert report["world_size"] == 2 and report["steps"] == STEPS
    assert sorted(r["slurm_node"] for r in report["ranks"]) == ["node1", "node2"]  # a rank on each node
    assert sorted(r["node_rank"] for r in report["ranks"]) == [0, 1]
    assert len({r["parameter_checksum"] for r in report["ranks"]}) == 1


FAIL_ON_RANK_1 = """\
import os, sys, time
from pathlib import Path

if os.environ["RANK"] == "1":  # this node fails at once
    Path("failed_at").write_text(repr(time.time()))
    sys.exit(4)
time.sleep(900)  # the other node would keep its allocation for 15 minutes if nothing stopped it
"""
FAIL_FAST_S = 60


def test_one_node_failing_ends_the_job_within_a_minute(cluster: Cluster, tmp_path: Path):
    """Issue 16.6: rank 1 exits 4 right away while rank 0 would sleep 15 minutes; srun --kill-on-bad-exit=1
    (and torchrun without restarts) end the whole job, FAILED, within a minute of the failure."""
    work = tmp_path / "work"
    write_two_node_config(work)
    (work / "fail_on_rank1.py").write_text(FAIL_ON_RANK_1)
    ran = submit(cluster, work, "fail_on_rank1.py")
    assert ran["code"] != 0, ran["logs"]
    assert (work / "failed_at").is_file(), ran["logs"]  # rank 1 did start, and failed
    state = job_state(cluster, ran["job_id"])
    assert state["JobState"] == "FAILED" and state["ExitCode"] != "0:0", state
    # slurmctld's end time (whole seconds, local time): `sbatch --wait` itself polls at growing intervals
    after_failure = datetime.fromisoformat(state["EndTime"]).timestamp() - float((work / "failed_at").read_text())
    print(f"job {ran['job_id']} ended {after_failure:.1f} s after rank 1 failed (sbatch --wait returned after "
          f"{ran['wall_s']:.1f} s)")
    assert after_failure < FAIL_FAST_S, ran["logs"]
