"""Issue 31: the examples `accelwiz doctor --help` prints run as written, in a real shell, with the variables they
say to set (node 0's address and port: loopback and a free port here). The srun example runs inside a real
two-node SLURM allocation (tests/launch/test_slurm_cluster.py's cluster), whose node names do not resolve: node 0's
address is the one SLURM knows it by, as in the sbatch script `run --slurm` writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.doctor.nodes import Cluster, Node, wait

TWO_MACHINES = "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 2\n"


def _examples(cli) -> list[str]:
    """The `$ ...` lines of the help's epilog, as a user would copy them (a trailing comment is shell too)."""
    result = cli("doctor", "--help")
    assert result.exit_code == 0
    return [line.strip()[2:] for line in result.stdout.splitlines() if line.strip().startswith("$ ")]


def _one(examples: list[str], *words: str) -> str:
    found = [line for line in examples if all(word in line for word in words)]
    assert len(found) == 1, examples
    return found[0]


@pytest.mark.slow
def test_the_by_hand_examples_pass_on_two_nodes(cli, tmp_path):
    examples = _examples(cli)
    export = _one(examples, "export MASTER_ADDR=")
    lines = [_one(examples, "--node-rank 0"), _one(examples, "--node-rank 1")]
    (tmp_path / "accelerate.yaml").write_text(TWO_MACHINES)  # the file the examples name
    cluster = Cluster(tmp_path)
    # the export as written, then the values this test's two "machines" on loopback have
    env = f"{export}\nexport MASTER_ADDR=127.0.0.1 MASTER_PORT={cluster.main_port}\n"
    ended = wait([cluster.start(Node(rank), ["bash", "-c", env + line]) for rank, line in enumerate(lines)])
    assert [e.code for e in ended] == [0, 0], [e.stdout + e.stderr for e in ended]
    assert all("2 nodes ready to train" in e.stdout for e in ended)


def test_the_json_example_runs_on_one_node(cli, tmp_path):
    line = _one(_examples(cli), "--format json")
    ran = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["nodes"] == 1


@pytest.mark.slow
@pytest.mark.xdist_group("slurm-cluster")
def test_the_srun_example_passes_inside_a_two_node_allocation(cli, tmp_path: Path):
    from tests.launch.test_slurm_cluster import ensure_slurm_installed, slurm_cluster
    from tests.ports import free_port

    line = _one(_examples(cli), "srun ")
    ensure_slurm_installed()
    with slurm_cluster(tmp_path / "slurm") as cluster:
        # the training's port, as the example leaves it to MASTER_PORT: a free one here
        env = {**cluster.env, "MASTER_PORT": str(free_port())}
        ran = subprocess.run(["salloc", "--nodes=2", "bash", "-c", line], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stdout + ran.stderr + cluster.logs()
    assert ran.stdout.count("2 nodes ready to train") == 2  # one table per node


def test_node_0_that_cannot_resolve_its_own_address_says_so(tmp_path):
    """Before, node 0 tried to host the preflight there and blamed the port ("another program holds it")."""
    cluster = Cluster(tmp_path)
    argv = ["bash", "-c", "accelwiz doctor --nodes 2 --node-rank 0 --main-address node-that-is-not.invalid "
                          f"--main-port {cluster.main_port} --format json"]
    ended = wait([cluster.start(Node(0), argv)])[0]
    assert ended.code == 4, ended.stdout + ended.stderr  # unreachable
    [finding] = ended.report["findings"]
    assert finding["check"] == "main address" and "cannot resolve node 0's address" in finding["detail"]
    assert "another program" not in finding["hint"]
