"""AW150: template placeholders in launch values are errors naming the flag that replaces them; real addresses,
ports, ranks and counts are not; the plan's or the launch's own rendezvous flags make the rendezvous keys moot."""

from __future__ import annotations

import pytest

from accelwiz.rules.placeholders import placeholder_kind
from tests.rules.helpers import codes, diagnostics

TWO_NODES = "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n"


@pytest.mark.parametrize("key,value,flag", [
    ("main_process_ip", "xxx.xxx.xxx.xxx", "--main_process_ip"),
    ("main_process_ip", "CONFIG_CHIEF_IP", "--main_process_ip"),
    ("main_process_ip", "<MASTER_IP>", "--main_process_ip"),
    ("main_process_ip", "$MASTER_ADDR", "--main_process_ip"),
    ("main_process_ip", "'${MASTER_ADDR}'", "--main_process_ip"),
    ("main_process_ip", "your_master_ip", "--main_process_ip"),
    ("main_process_port", "$MASTER_PORT", "--main_process_port"),
    ("main_process_port", "'{{ port }}'", "--main_process_port"),
    ("machine_rank", "MACHINE_RANK", "--machine_rank"),
    ("machine_rank", "${NODE_RANK}", "--machine_rank"),
    ("num_processes", "$WORLD_SIZE", "--num_processes"),
    ("num_machines", "<NUM_NODES>", "--num_machines"),
])
def test_placeholder_is_an_error_naming_the_flag(write, key, value, flag):
    text = "\n".join(line for line in TWO_NODES.splitlines() if not line.startswith(key + ":"))
    path = write("accelerate.yaml", f"{text}\n{key}: {value}\n")
    found = [d for d in diagnostics(path, select=("AW150",))]
    assert len(found) == 1 and found[0].path == (key,) and flag in found[0].message
    assert found[0].severity.value == "error"


@pytest.mark.parametrize("value", ["10.0.0.4", "node-1.cluster.local", "ip-10-0-0-1.ec2.internal", "localhost",
                                   "'1234'", "example", "gpu01", "::1"])
def test_real_or_merely_odd_addresses_are_not_placeholders(write, value):
    # '1234' and 'example' are AW105's (a warning): not an IP or host name, but not plainly a template slot
    path = write("accelerate.yaml", f"{TWO_NODES}main_process_ip: {value}\nmachine_rank: 1\nmain_process_port: 29500\n")
    assert "AW150" not in codes(path)


def test_address_on_one_machine_is_not_used(write):
    path = write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 2\n"
                                    "main_process_ip: <MASTER_IP>\nmachine_rank: MACHINE_RANK\n")
    assert [d.path for d in diagnostics(path, select=("AW150",))] == [("machine_rank",)]


def test_plan_with_per_node_launcher_supplies_the_rendezvous(write):
    from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    path = write("accelerate.yaml", f"{TWO_NODES}main_process_ip: $MASTER_ADDR\nmachine_rank: $NODE_RANK\n"
                                    "num_processes: $WORLD_SIZE\n".replace("num_processes: 16\n", ""))

    def plan(kind: str) -> PlanFile:
        return PlanFile(files=PlanFiles(accelerate="accelerate.yaml"),
                        system=PlanSystem(name="2x8xH100", machines=2, gpus_per_machine=8),
                        launcher=PlanLauncher(kind=kind), model=PlanModel(name="llama-3.1-8b"),
                        training=PlanTraining(micro_batch=1, sequence_length=2048))

    slurm = check_paths([path], select_rules(["AW150"]), plan=plan("slurm")).diagnostics
    assert [d.path for d in slurm] == [("num_processes",)]  # a count is not supplied by the launcher
    local = check_paths([path], select_rules(["AW150"]), plan=plan("local")).diagnostics
    assert {d.path for d in local} == {("main_process_ip",), ("machine_rank",), ("num_processes",)}


def test_launch_that_passes_the_rendezvous_flags_reports_them_as_handled(write):
    from accelwiz.rules.context import LaunchFacts
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    path = write("accelerate.yaml", f"{TWO_NODES}main_process_ip: <MASTER_IP>\n")
    result = check_paths([path], select_rules(["AW150"]), launch=LaunchFacts(supplies_rendezvous=True))
    assert not result.diagnostics and [d.code for d in result.handled] == ["AW150"]


@pytest.mark.parametrize("value,kind", [
    ("$(hostname -i)", "shell"), ("X.X.X.X", "masked"), ("xxxx", "masked"), ("[MASTER ADDR]", "template"),
    ("MAIN_PROCESS_IP", "variable"), (None, None), (29500, None), ("", None), ("x", None), ("host_name", None),
])
def test_placeholder_kinds(value, kind):
    found = placeholder_kind(value)
    assert (found is None) == (kind is None) and (kind is None or kind in found)


def test_no_corpus_config_becomes_an_error_but_the_redacted_issue_reports(corpus):
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    rules = select_rules(["AW150"])
    flagged = {f.name for sub in ("real", "broken") for f in sorted((corpus / sub).iterdir())
               if f.suffix in (".yaml", ".yml", ".conf") and check_paths([f], rules).diagnostics}
    # the two node configs of accelerate#3894 carry the user's own redaction of the address
    assert flagged == {"huggingface-accelerate__3894.yaml", "huggingface-accelerate__3894_node1.yaml"}
