"""Where a node stands: flags over SLURM's variables over torchrun's, SLURM's host list, and bad input as one
line with exit 2."""

from __future__ import annotations

import re

import pytest

from accelwiz.doctor.allocation import DEFAULT_MAIN_PORT, expand_nodelist, read_allocation
from accelwiz.errors import UsageError

SLURM = {"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_NODELIST": "gpu[07-09]"}
TORCHRUN = {"NODE_RANK": "2", "WORLD_SIZE": "4", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29600"}


@pytest.mark.parametrize(("text", "hosts"), [
    ("gpu[01-03,07],login1", ["gpu01", "gpu02", "gpu03", "gpu07", "login1"]),
    ("n[8-11]", ["n8", "n9", "n10", "n11"]),
    ("a,b-c", ["a", "b-c"]),
    ("", []),
])
def test_slurm_host_lists_expand_in_order(text, hosts):
    assert expand_nodelist(text) == hosts


def test_slurm_gives_the_rank_the_count_and_node_0s_host():
    alloc = read_allocation(SLURM)
    assert (alloc.nodes, alloc.rank, alloc.main_address) == (3, 1, "gpu07")
    assert (alloc.main_port, alloc.store_port) == (DEFAULT_MAIN_PORT, DEFAULT_MAIN_PORT + 1)
    assert alloc.host_of(2) == "gpu09"


def test_torchrun_variables_and_flags_over_them():
    assert read_allocation(TORCHRUN).main == "10.0.0.1:29600"
    alloc = read_allocation(TORCHRUN, node_rank=0, main_port=30000, main_address="head")
    assert (alloc.rank, alloc.nodes, alloc.main, alloc.store_port) == (0, 4, "head:30000", 30001)


def test_expect_nodes_is_the_count_when_nothing_else_says():
    assert read_allocation({}, expect_nodes=2, node_rank=1, main_address="h").nodes == 2
    assert read_allocation(SLURM, expect_nodes=2).nodes == 3  # SLURM's count is compared, not replaced


@pytest.mark.parametrize(("environ", "flags", "message"), [
    ({}, {"nodes": 2, "node_rank": 2, "main_address": "h"}, "node rank 2 is outside 0..1"),
    ({}, {"nodes": 2, "node_rank": 1}, "2 nodes but no main address"),
    ({"SLURM_NTASKS": "two"}, {}, "SLURM_NTASKS='two' is not an integer"),
    ({}, {"main_port": 70000}, "--main-port 70000 is not a TCP port"),
    ({}, {"main_port": 5000, "store_port": 5000}, "--store-port 5000 is the main port"),
])
def test_inconsistent_allocations_are_usage_errors(environ, flags, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        read_allocation(environ, **flags)
