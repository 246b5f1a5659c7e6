"""The line a job script runs before training (accelwiz.doctor.command.preflight_line), run by bash as written."""

from __future__ import annotations

import json

import pytest

from accelwiz.doctor.command import preflight_line
from tests.doctor.nodes import Cluster, Node, wait


def test_job_time_values_stay_for_the_shell_and_the_rest_is_quoted():
    line = preflight_line(nodes=2, main_address="$MAIN_PROCESS_IP", main_port=29500, config="my run/acc.yaml",
                          timeout=20)
    assert line == ('accelwiz doctor --expect-nodes 2 --main-address "$MAIN_PROCESS_IP" --main-port 29500 '
                    "--config 'my run/acc.yaml' --timeout 20")
    assert preflight_line(nodes=2, main_address="head", main_port="${PORT}", node_rank=1).endswith(
        '--main-port "${PORT}" --node-rank 1')
    assert "'$(reboot)'" in preflight_line(nodes=2, main_address="$(reboot)", main_port=1)  # not run


@pytest.mark.slow
def test_the_per_node_lines_run_by_bash_pass_on_two_sound_nodes(tmp_path):
    """What the per-node commands will do: `<line> && accelerate launch ...`, one line per node, the address
    expanded at job time. Both nodes pass and measure an all-reduce; the token files are cleaned up."""
    cluster = Cluster(tmp_path)
    assert cluster.store_port == cluster.main_port + 1  # the line's default
    lines = [preflight_line(nodes=2, main_address="$MAIN_PROCESS_IP", main_port=cluster.main_port, node_rank=rank,
                            output_dir=cluster.output) + f" --cache-dir cache{rank} --format json && echo TRAINING"
             for rank in (0, 1)]
    env = {"MAIN_PROCESS_IP": "127.0.0.1"}
    ended = wait([cluster.start(Node(rank, env=env), ["bash", "-c", line]) for rank, line in enumerate(lines)])
    assert [e.code for e in ended] == [0, 0], [e.stderr + e.stdout for e in ended]
    for e in ended:
        report, after = e.stdout.rsplit("}", 1)
        assert after.strip() == "TRAINING"
        report = json.loads(report + "}")
        assert report["exit_code"] == 0 and [f["rank"] for f in report["facts"]] == [0, 1]
        assert all(r["backend"] == "gloo" and r["error"] is None and r["bus_bandwidth_gbps"] > 0
                   for r in report["allreduce"].values())
    assert not list(cluster.output.iterdir())
