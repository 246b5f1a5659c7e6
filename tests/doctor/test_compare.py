"""From facts to rows: this machine's real facts as node 0, the other nodes as copies with one value changed."""

from __future__ import annotations

import pytest

from accelwiz.doctor.compare import differences, local_findings, plan_findings, sharing_findings
from accelwiz.doctor.exchange import is_local_address
from accelwiz.doctor.gather import gather, gloo_interfaces, interface_checks, nccl_interfaces, sees_token
from accelwiz.doctor.model import Problem, Sighting, exit_code
from accelwiz.plan_file import PlanSystem


@pytest.fixture()
def node0(tmp_path):
    return gather(0, folders={"output": tmp_path / "out", "cache": tmp_path / "cache"}, nonce="00000000000a", environ={})


def with_packages(node, rank, **packages):
    return node.model_copy(update={"rank": rank, "packages": {**node.packages, **packages}})


def test_the_odd_node_out_is_named_against_the_majority(node0):
    nodes = [node0, with_packages(node0, 1, accelerate="0.1.0"), with_packages(node0, 2)]
    [row] = differences(nodes)
    assert (row.problem, row.node, row.check) == (Problem.MISMATCH, 1, "accelerate")
    assert row.detail == f"0.1.0 here; nodes 0, 2 have {node0.packages['accelerate']}"


def test_a_tie_takes_node_0_as_the_reference_and_a_missing_package_counts(node0):
    [row] = differences([node0, with_packages(node0, 1, trl=None)])
    assert (row.node, row.detail) == (1, f"not installed here; node 0 has {node0.packages['trl']}")


def test_the_plan_names_the_node_count_and_each_nodes_gpus(node0):
    plan = PlanSystem(name="2x8xH100-80GB", machines=2, gpus_per_machine=8, gpu="NVIDIA H100 80GB HBM3")
    rows = plan_findings([node0], 1, plan, "accelerate.plan.yaml", expect_nodes=2)
    assert [(r.node, r.check) for r in rows] == [(None, "nodes"), (None, "nodes"), (0, "GPUs")]
    assert rows[1].detail == "1 node in the allocation; accelerate.plan.yaml expects 2"
    assert rows[2].detail == "0 GPUs here; accelerate.plan.yaml plans 8 per machine"
    assert exit_code(rows) == 3


def test_interfaces_follow_nccl_and_gloo_syntax():
    usable = ["eth0", "eth1", "ib0", "lo"]
    assert nccl_interfaces("eth", usable).usable == ["eth0", "eth1"]  # a prefix
    assert not nccl_interfaces("=eth", usable).ok  # exact: no interface is called "eth"
    assert nccl_interfaces("ib,en", usable).ok and nccl_interfaces("ib,en", usable).missing == ["en"]
    assert nccl_interfaces("^eth,ib,lo", usable).ok is False  # everything excluded
    assert nccl_interfaces("^docker", usable).usable == usable
    assert gloo_interfaces("eth0,ib1", usable).missing == ["ib1"]  # gloo needs every name
    assert not gloo_interfaces("eth0,ib1", usable).ok and gloo_interfaces("lo", usable).ok


def test_this_machines_interfaces_are_read_for_real():
    [nccl, gloo] = interface_checks({"NCCL_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "lo,nosuch0"})
    assert nccl.ok and nccl.usable == ["lo"]  # loopback always has 127.0.0.1
    assert gloo.missing == ["nosuch0"]


def test_an_absent_interface_and_an_unwritable_folder_are_the_nodes_own_rows(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    node = gather(1, folders={"output": blocker, "cache": tmp_path / "cache"}, nonce="00000000000b",
                  environ={"GLOO_SOCKET_IFNAME": "nosuch0"})
    rows = local_findings(node)
    assert [(r.problem, r.node, r.check) for r in rows] == [
        (Problem.INTERFACE, 1, "GLOO_SOCKET_IFNAME"), (Problem.STORAGE, 1, "output folder")]
    assert "nosuch0" in rows[0].detail and "lo" in rows[0].detail  # what the node has instead
    assert rows[1].detail.endswith("is not writable: it is a file, not a folder")


def test_a_token_seen_by_the_other_node_means_a_shared_folder(node0, tmp_path):
    node1 = gather(1, folders={"output": tmp_path / "out", "cache": tmp_path / "elsewhere"}, nonce="00000000000b",
                   environ={})
    out0, out1 = node0.folders[0], node1.folders[0]
    assert sees_token(out1.path, "output", 0, out0.nonce)
    assert not sees_token(out1.path, "output", 0, "00000000000c")  # another run's nonce
    assert not sees_token(out1.path, "output", 1, out0.nonce)  # another node's name
    shared = [Sighting(rank=0, seen={"output": [0, 1]}), Sighting(rank=1, seen={"output": [0, 1]})]
    assert sharing_findings([node0, node1], shared) == []
    [row] = sharing_findings([node0, node1], [shared[0], Sighting(rank=1, seen={"output": [1]})])
    assert (row.node, row.problem, row.detail) == (
        1, Problem.STORAGE, f"{out1.path} is not shared: node 1 does not see the files node 0 wrote there")


def test_node_0_knows_its_own_addresses():
    assert is_local_address("127.0.0.1") and is_local_address("localhost")
    assert is_local_address("192.0.2.1") is False  # TEST-NET-1 (RFC 5737): nobody's interface
    assert is_local_address("no-such-host.invalid") is None
