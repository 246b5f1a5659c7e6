"""Two machines on one host, for real: the two lines `accelwiz run --print-node-commands` prints for a 2-machine
config (main_process_ip 127.0.0.1, a free port), run as printed by bash in two separate process trees, train the
built-in model on CPU over gloo, with DDP (c10d rendezvous) and with DeepSpeed ZeRO-3 (static rendezvous).

Both trees exit 0; the run report has a rank on each machine, and every rank's final loss and checksum of its own
full copy of the parameters agree (for ZeRO-3 the shards are gathered across the two machines first).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining, dump_plan
from tests.ports import free_port

pytestmark = pytest.mark.slow

STEPS = 3
TIMEOUT = 420  # seconds for both trees together; the 2-core CI machine takes about 40 (DDP) and 60 (ZeRO-3)

CONFIGS = {
    "ddp": ("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 2\nmachine_rank: 0\n"
            "main_process_ip: 127.0.0.1\nmain_process_port: {port}\nmixed_precision: 'no'\nuse_cpu: false\n"),
    "zero3": ("distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 2\nmachine_rank: 0\n"
              "main_process_ip: 127.0.0.1\nmain_process_port: {port}\nrdzv_backend: static\nmixed_precision: 'no'\n"
              "use_cpu: false\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: false\n"
              "  gradient_clipping: 1.0\n  deepspeed_multinode_launcher: standard\n"),
}




def cpu_pair_plan(rdzv_backend: str | None) -> PlanFile:
    """Two CPU-only machines, one process each, started by per-node commands: the tiny built-in model."""
    return PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml"),
        system=PlanSystem(name="cpu-pair", machines=2, gpus_per_machine=0, host_memory_bytes=8 * 2**30),
        launcher=PlanLauncher(kind="node-commands", rdzv_backend=rdzv_backend),
        model=PlanModel(name="tiny"),
        training=PlanTraining(micro_batch=2, gradient_accumulation=1, sequence_length=32, precision="fp32"),
    )


def child_env() -> dict[str, str]:
    """This interpreter's `accelerate` first on PATH, as on a node where accelwiz is installed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "RANK", "WORLD_SIZE"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["OMP_NUM_THREADS"] = "1"
    return env


def stop(process: subprocess.Popen) -> None:
    """End a node's process tree (its own session, started here) by its id."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_two_nodes(directory: Path, kind: str, steps: int = STEPS, *, plan: bool = True) -> dict:
    """Write the config (and plan), print the node commands with `accelwiz run`, run each line as printed in its
    own process tree, both at once (machine 1 first: only machine 0 hosts the rendezvous store, so the order does
    not matter), and return what happened: lines, exit codes, logs, wall seconds, report."""
    port = free_port()
    (directory / "accelerate.yaml").write_text(CONFIGS[kind].format(port=port))
    if plan:
        (directory / "accelerate.plan.yaml").write_text(
            dump_plan(cpu_pair_plan("static" if kind == "zero3" else None)))
    printed = subprocess.run(
        [sys.executable, "-m", "accelwiz", "run", "--model", "tiny", "--steps", str(steps), "--print-node-commands"],
        cwd=directory, env=child_env(), capture_output=True, text=True, timeout=120,
    )
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.strip().splitlines()
    started = time.monotonic()
    deadline = started + TIMEOUT
    logs = [directory / f"node{rank}.log" for rank in (0, 1)]
    nodes: list[subprocess.Popen] = []
    codes: list[int | None] = []
    try:
        for rank in (1, 0):
            with logs[rank].open("w") as log:  # each node: its own process tree, the line run as printed
                nodes.append(subprocess.Popen(["bash", "-c", lines[rank]], cwd=directory, env=child_env(),
                                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        codes = [node.wait(timeout=max(1.0, deadline - time.monotonic())) for node in reversed(nodes)]
    finally:
        for node in nodes:
            stop(node)
    wall = time.monotonic() - started
    report_path = directory / "accelwiz-run" / "run_report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else None
    return {"lines": lines, "codes": codes, "wall_s": wall, "report": report, "stderr": printed.stderr,
            "logs": "\n".join(log.read_text()[-3000:] for log in logs),
            "preflights": sum(log.read_text().count("accelwiz preflight: 2 nodes ready") for log in logs)}


def launch_part(line: str) -> str:
    """The launch of a printed node line, after the preflight (`accelwiz doctor ... && ...`) that runs first."""
    doctor, _, launch = line.partition(" && ")
    assert re.match(r"ACCELWIZ_DOCTOR_SECRET=[0-9a-f]{32} accelwiz doctor --expect-nodes 2 ", doctor), line
    return launch


@pytest.mark.parametrize("kind", ["ddp", "zero3"])
def test_two_machines_on_one_host(tmp_path: Path, kind: str):
    ran = run_two_nodes(tmp_path, kind)
    lines = ran["lines"]
    assert len(lines) == 2 and all(f"--machine_rank {rank} " in line for rank, line in enumerate(lines))
    assert len({line.split()[0] for line in lines}) == 1  # one job secret: both doctors open each other's records
    if kind == "ddp":  # the plan's machines have no GPU: the lines carry the CPU fallback themselves
        assert all(shlex.split(launch_part(line))[0] == "ACCELERATE_USE_CPU=true" for line in lines)
    assert ran["codes"] == [0, 0], ran["logs"]
    assert ran["preflights"] == 2  # each node's preflight passed before it trained

    report = ran["report"]
    ranks = report["ranks"]
    assert report["world_size"] == 2 and report["steps"] == STEPS
    # DDP on CPU is what accelerate calls MULTI_CPU (ACCELERATE_USE_CPU=true under torchrun)
    assert report["distributed_type"] == ("DEEPSPEED" if kind == "zero3" else "MULTI_CPU")
    assert sorted(r["node_rank"] for r in ranks) == [0, 1]  # one rank on each machine
    assert len({r["final_loss"] for r in ranks}) == 1 and ranks[0]["final_loss"] == report["final_loss"]
    assert len({r["parameter_checksum"] for r in ranks}) == 1
    assert report["losses"][-1] < report["losses"][0]


def test_two_cpu_machines_without_a_plan_train_as_one_world(tmp_path: Path):
    """Issue 16.5: without a plan, on a machine without a GPU, the printed lines started two independent
    1-process trainings (each `distributed_type NO`, world size 1, both "done"). The machines are taken to be
    like this one: the lines carry the CPU fallback and make one gloo world of 2, a rank on each machine."""
    from accelwiz.probe.profiles import load_system

    if load_system("local").gpu_count:
        pytest.skip("this machine has a GPU: without a plan the lines are for GPU machines")
    ran = run_two_nodes(tmp_path, "ddp", plan=False)
    assert all(shlex.split(launch_part(line))[0] == "ACCELERATE_USE_CPU=true" for line in ran["lines"])
    assert "this machine has no GPU" in ran["stderr"]
    assert ran["codes"] == [0, 0], ran["logs"]
    report = ran["report"]
    assert (report["world_size"], report["distributed_type"]) == (2, "MULTI_CPU")
    assert sorted(r["node_rank"] for r in report["ranks"]) == [0, 1]
    assert len({r["parameter_checksum"] for r in report["ranks"]}) == 1
