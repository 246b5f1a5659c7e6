"""Two nodes for real: two `accelwiz doctor` process trees on loopback, a fault injected into one of them.

Each fault is named in the table of both nodes (the node and the difference), and both end with the documented
exit code: 3 mismatch, 4 unreachable, 5 main port, 6 interface, 7 storage. (Two sound nodes passing: the
per-node lines in test_command.py.)
"""

from __future__ import annotations

import socket

import pytest

from tests.doctor.nodes import Cluster, Node, in_mount_namespace, wait

pytestmark = pytest.mark.slow


def test_another_accelerate_on_one_node_is_a_mismatch(tmp_path):
    fake = tmp_path / "fake-site"
    (fake / "accelerate-0.1.0.dist-info").mkdir(parents=True)
    (fake / "accelerate-0.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: accelerate\nVersion: 0.1.0\n")
    node0, node1 = Cluster(tmp_path).run(Node(0), Node(1, pythonpath=(str(fake),), text=True))
    assert (node0.code, node1.code) == (3, 3), node0.stderr + node0.stdout + node1.stderr + node1.stdout
    assert node0.rows() == [("mismatch", 1, "accelerate")]
    assert node0.report["findings"][0]["detail"].startswith("0.1.0 here; node 0 has ")
    # the table, as a person reads it in node 1's log
    assert "accelwiz preflight: 2 nodes, 1 problem (exit 3" in node1.stdout
    assert "accelerate" in node1.stdout and "0.1.0 here; node 0 has" in node1.stdout


def test_a_held_main_port_is_named_on_both_nodes(tmp_path):
    cluster = Cluster(tmp_path)
    with socket.create_server(("127.0.0.1", cluster.main_port)):  # another job's process on node 0
        ended = cluster.run(Node(0), Node(1))
    assert [e.code for e in ended] == [5, 5], [e.stderr + e.stdout for e in ended]
    for e in ended:
        assert e.rows() == [("main port", 0, "main port")]
        assert "cannot listen on the main port: Address already in use" in e.report["findings"][0]["detail"]


def test_a_held_preflight_port_ends_both_nodes_instead_of_hanging(tmp_path):
    """Node 1 meets another program where node 0's store should be: torch's store client would wait forever."""
    cluster = Cluster(tmp_path)
    with socket.create_server(("127.0.0.1", cluster.store_port)):
        node0, node1 = cluster.run(Node(0), Node(1))
    assert (node0.code, node1.code) == (5, 5), node0.stderr + node0.stdout + node1.stderr + node1.stdout
    assert node0.rows() == node1.rows() == [("main port", 0, "preflight port")]
    assert "EADDRINUSE" in node0.report["findings"][0]["detail"]
    assert node1.report["findings"][0]["detail"] == (
        f"node 1 reached 127.0.0.1:{cluster.store_port}, but port {cluster.store_port} accepts connections but "
        "does not answer as the preflight's store")


def test_absent_interfaces_are_named_with_their_node(tmp_path):
    ended = Cluster(tmp_path).run(Node(0, env={"NCCL_SOCKET_IFNAME": "=ib0"}),
                                  Node(1, env={"GLOO_SOCKET_IFNAME": "nosuch0"}))
    assert [e.code for e in ended] == [6, 6], [e.stderr + e.stdout for e in ended]
    for e in ended:
        assert e.rows() == [("interface", 0, "NCCL_SOCKET_IFNAME"), ("interface", 1, "GLOO_SOCKET_IFNAME")]


def test_a_read_only_output_folder_on_one_node(tmp_path):
    cluster = Cluster(tmp_path)
    out = cluster.output
    read_only = in_mount_namespace(f"mount --bind {out} {out} && mount -o remount,bind,ro {out}")
    ended = cluster.run(Node(0), Node(1, prefix=read_only))
    assert [e.code for e in ended] == [7, 7], [e.stderr + e.stdout for e in ended]
    for e in ended:
        assert e.rows() == [("storage", 1, "output folder")]
        assert e.report["findings"][0]["detail"] == f"{out} is not writable: Read-only file system"


def test_an_output_folder_that_is_not_shared(tmp_path):
    cluster = Cluster(tmp_path)
    node_local = in_mount_namespace(f"mount -t tmpfs none {cluster.output}")  # node 1's own disk, same path
    ended = cluster.run(Node(0), Node(1, prefix=node_local))
    assert [e.code for e in ended] == [7, 7], [e.stderr + e.stdout for e in ended]
    for e in ended:
        assert e.rows() == [("storage", 0, "output folder"), ("storage", 1, "output folder")]
        assert "does not see the files node 1 wrote there" in e.report["findings"][0]["detail"]


def test_a_node_that_never_comes(tmp_path):
    """Only one node of two starts: node 0 names the node it waited for, node 1 the address it could not reach."""
    alone0, alone1 = Cluster(tmp_path / "a"), Cluster(tmp_path / "b")
    node0, node1 = wait([alone0.start(Node(0)), alone1.start(Node(1))])
    assert (node0.code, node1.code) == (4, 4), node0.stderr + node0.stdout + node1.stderr + node1.stdout
    [waited] = node0.report["findings"]
    assert (waited["node"], waited["check"]) == (1, "rendezvous")
    assert waited["detail"].startswith(f"node 1 did not join the preflight at 127.0.0.1:{alone0.store_port}; "
                                       "waited ")
    [unreached] = node1.report["findings"]
    assert (unreached["node"], unreached["host"]) == (0, "127.0.0.1")
    assert unreached["detail"].startswith(f"node 1 could not reach node 0 at 127.0.0.1:{alone1.store_port} "
                                          "(waited ")
