"""A real SLURM cluster on this machine: munged, slurmctld and two slurmd nodes (two NodeNames on 127.0.0.1 with
their own ports, `slurmd -N NAME`), all configured from a slurm.conf in a temporary directory with plugins that
work in a container (proctrack/linuxproc, task/none, no cgroup, no accounting).

The sbatch script `accelwiz run --slurm` writes for a 2-machine CPU config (no main_process_ip: the plan says
SLURM supplies it) is submitted with `sbatch --wait`; the job exits 0 and the run report has a rank on each node.
Debian's slurm-wlm and munge are installed with apt when missing; without root or apt the test skips, saying why.
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
from pathlib import Path

import pytest

from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining, dump_plan
from tests.apt import ensure_programs
from tests.ports import free_port

pytestmark = pytest.mark.slow

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
NodeName=node1 NodeAddr=127.0.0.1 NodeHostname={host} Port={node1_port} CPUs={cpus} State=UNKNOWN
NodeName=node2 NodeAddr=127.0.0.1 NodeHostname={host} Port={node2_port} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
"""


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


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    ensure_slurm_installed()
    with slurm_cluster(tmp_path / "slurm") as running:
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


def submit_two_node_job(cluster: Cluster, work: Path, steps: int = STEPS) -> dict:
    """Write a 2-machine CPU config and its SLURM plan in `work`, let `accelwiz run --slurm` write the script,
    submit it with `sbatch --wait`; returns the script, the exit status, the wall time, the report and logs."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "accelerate.yaml").write_text(  # 2 machines, 1 CPU process each; no main_process_ip: SLURM gives it
        f"distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 2\nmachine_rank: 0\n"
        f"main_process_port: {free_port()}\nmixed_precision: 'no'\nuse_cpu: false\n")
    (work / "accelerate.plan.yaml").write_text(dump_plan(PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml"),
        system=PlanSystem(name="cpu-pair", machines=2, gpus_per_machine=0, host_memory_bytes=8 * 2**30),
        # static: on one host both nodes' c10d agents would race for the same port (never on two hosts)
        launcher=PlanLauncher(kind="slurm", rdzv_backend="static"),
        model=PlanModel(name="tiny"),
        training=PlanTraining(micro_batch=2, sequence_length=32, precision="fp32"),
    )))
    checked = subprocess.run([sys.executable, "-m", "accelwiz", "check", "accelerate.yaml", "--select", "AW1"],
                             cwd=work, env=cluster.env, capture_output=True, text=True, timeout=120)
    written = subprocess.run(
        [sys.executable, "-m", "accelwiz", "run", "--steps", str(steps), "--slurm", "job.sbatch"],
        cwd=work, env=cluster.env, capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    started = time.monotonic()
    job = subprocess.run(["sbatch", "--wait", "job.sbatch"], cwd=work, env=cluster.env, capture_output=True,
                         text=True, timeout=480)
    wall = time.monotonic() - started
    report_path = work / "accelwiz-run" / "run_report.json"
    outputs = "\n".join(p.read_text()[-4000:] for p in work.glob("accelwiz-*.out"))
    return {"check": checked, "script": (work / "job.sbatch").read_text(), "code": job.returncode, "wall_s": wall,
            "report": json.loads(report_path.read_text()) if report_path.is_file() else None,
            "logs": f"{job.stdout}{job.stderr}\n{outputs}\n{cluster.logs()}"}


def test_sbatch_script_runs_on_a_two_node_cluster(cluster: Cluster, tmp_path: Path):
    ran = submit_two_node_job(cluster, tmp_path / "work")
    # the plan says SLURM supplies the rendezvous: no AW104 in check
    assert ran["check"].returncode == 0 and "AW104" not in ran["check"].stdout, ran["check"].stdout
    script = ran["script"]
    assert "#SBATCH --nodes=2" in script and "--gpus-per-node" not in script and str(Path.home()) not in script
    assert ran["code"] == 0, ran["logs"]
    report = ran["report"]
    assert report["world_size"] == 2 and report["steps"] == STEPS
    assert sorted(r["slurm_node"] for r in report["ranks"]) == ["node1", "node2"]  # a rank on each node
    assert sorted(r["node_rank"] for r in report["ranks"]) == [0, 1]
    assert len({r["parameter_checksum"] for r in report["ranks"]}) == 1
