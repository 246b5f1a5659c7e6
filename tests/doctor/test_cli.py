"""`accelwiz doctor` on one node, in-process: the report, the plan comparison, bad usage; no torch import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanSystem, PlanTraining, dump_plan
from tests.ports import free_port


@pytest.fixture(autouse=True)
def _outside_any_allocation(monkeypatch):
    for name in ("SLURM_NTASKS", "SLURM_PROCID", "SLURM_NODELIST", "SLURM_JOB_NODELIST", "WORLD_SIZE", "RANK",
                 "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        monkeypatch.delenv(name, raising=False)


def folders(tmp_path):
    """A folder for the output and one for the cache, and a main port nobody holds."""
    return ["--output-dir", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
            "--main-port", str(free_port())]


def test_one_node_reports_itself_as_json(cli, tmp_path):
    done = cli("doctor", "--format", "json", *folders(tmp_path))
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["nodes"], report["exit_code"], report["findings"]) == (1, 0, [])
    [facts] = report["facts"]
    assert facts["packages"]["torch"] and "lo" in facts["usable_interfaces"]
    assert not list((tmp_path / "out").iterdir())


def test_a_plan_for_two_gpu_machines_is_a_mismatch_here(cli, write, tmp_path):
    plan = PlanFile(files=PlanFiles(accelerate="accelerate.yaml"),
                    system=PlanSystem(name="2x8xH100-80GB", machines=2, gpus_per_machine=8),
                    model=PlanModel(name="tiny"), training=PlanTraining(micro_batch=1, sequence_length=32))
    write("accelerate.plan.yaml", dump_plan(plan))
    yaml = write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n")
    done = cli("doctor", "--config", str(yaml), "--expect-nodes", "2", "--nodes", "1", "--format", "json",
               *folders(tmp_path))
    assert done.exit_code == 3, done.stdout + done.stderr
    details = [(f["node"], f["detail"]) for f in json.loads(done.stdout)["findings"]]
    assert details == [(None, "1 node in the allocation; --expect-nodes expects 2"),
                       (None, "1 node in the allocation; accelerate.plan.yaml expects 2"),
                       (0, "0 GPUs here; accelerate.plan.yaml plans 8 per machine")]


@pytest.mark.parametrize(("args", "message"), [
    (["--nodes", "2", "--node-rank", "1"], "error: 2 nodes but no main address\n  hint: pass --main-address"),
    (["--config", "missing.yaml"], "error: config file `missing.yaml` not found\n"),
])
def test_bad_usage_is_one_line_and_exit_2(cli, args, message):
    done = cli("doctor", *args)
    assert done.exit_code == 2 and done.stderr.startswith(message) and "Traceback" not in done.stderr


def test_one_node_needs_no_torch(tmp_path):
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom accelwiz.cli import app\n"
            f"done = CliRunner().invoke(app, ['doctor', *{folders(tmp_path)!r}])\n"
            "assert done.exit_code == 0, done.output\n"
            "print(sorted(m for m in ('torch', 'deepspeed', 'accelerate', 'transformers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("[]")
