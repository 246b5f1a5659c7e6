"""AW1xx: each topology rule fires on a config with the mistake and stays quiet on a close one without it;
the broken corpus cases it is responsible for are caught."""

from __future__ import annotations

import pytest

from tests.rules.helpers import codes, diagnostics

TOPOLOGY = ("AW1",)
MULTI_NODE = "num_machines: 2\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n"


@pytest.mark.parametrize(
    "code,bad,good",
    [
        (
            "AW101",
            "distributed_type: MULTI_GPU\nnum_processes: 1\n",
            "distributed_type: MULTI_GPU\nnum_processes: 2\n",
        ),
        (
            "AW102",
            f"distributed_type: MULTI_GPU\nnum_processes: 9\n{MULTI_NODE}",
            f"distributed_type: MULTI_GPU\nnum_processes: 8\n{MULTI_NODE}",
        ),
        (
            "AW103",
            f"distributed_type: MULTI_GPU\nnum_processes: 8\n{MULTI_NODE}machine_rank: 2\n",
            f"distributed_type: MULTI_GPU\nnum_processes: 8\n{MULTI_NODE}machine_rank: 1\n",
        ),
        (
            "AW104",
            "distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 2\n",
            f"distributed_type: MULTI_GPU\nnum_processes: 8\n{MULTI_NODE}",
        ),
        (
            "AW104",
            "distributed_type: MULTI_CPU\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
            "mpirun_config:\n  mpirun_hostfile: hosts\n",
            "distributed_type: MULTI_CPU\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
            "main_process_port: 29500\nmpirun_config:\n  mpirun_hostfile: hosts\n",
        ),
        (
            "AW105",
            "distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: '1234'\n"
            "main_process_port: 9999\n",
            "distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: node-01.cluster\n"
            "main_process_port: 9999\n",
        ),
        (
            "AW106",
            "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: '0'\n",
            "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0,1\n",
        ),
        (
            "AW107",
            "distributed_type: FSDP\nnum_processes: 4\ngpu_ids: 0,1\n",
            "distributed_type: FSDP\nnum_processes: 4\ngpu_ids: 0,1,2,3\n",
        ),
        (
            "AW108",
            "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0,1,2\n",
            "distributed_type: MULTI_GPU\nnum_processes: 3\ngpu_ids: 0,1,2\n",
        ),
        (
            "AW109",
            "distributed_type: MULTI_CPU\nnum_processes: 4\n",
            "distributed_type: MULTI_CPU\nnum_processes: 4\nmpirun_config:\n  mpirun_hostfile: /etc/hosts.mpi\n",
        ),
        (
            "AW110",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: c10d\n",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: static\n",
        ),
        (
            "AW110",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nenable_cpu_affinity: true\n",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nenable_cpu_affinity: false\n",
        ),
        (
            "AW110",
            "distributed_type: XLA\nnum_processes: 8\ndowncast_bf16: 'yes'\n",
            "distributed_type: MULTI_GPU\nnum_processes: 8\ndowncast_bf16: 'yes'\n",
        ),
        (
            "AW110",
            "distributed_type: XLA\nnum_processes: 8\ntpu_env: [FOO=1]\n",
            "distributed_type: XLA\nnum_processes: 8\ntpu_env: ['']\n",
        ),
        ("AW111", "distributed_type: FSDP\n", "distributed_type: FSDP\nnum_processes: 2\n"),
        ("AW111", "distributed_type: MULTI_GPU\nnum_processes: -1\n", "distributed_type: 'NO'\n"),
        # unquoted, NO is the boolean false: accelerate's process_config gives 1 process only to the string "NO"
        ("AW111", "distributed_type: NO\n", "distributed_type: NO\nnum_processes: 1\n"),
        ("AW112", "distributed_type: 'NO'\nnum_processes: 8\n", "distributed_type: 'NO'\nnum_processes: 1\n"),
        (
            "AW113",
            "distributed_type: MULTI_GPU\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 3\n",
            "distributed_type: MULTI_GPU\nnum_processes: 2\ndeepspeed_config: {}\n",
        ),
        (
            "AW113",
            "distributed_type: DEEPSPEED\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n",
            "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n",
        ),
    ],
)
def test_rule_fires_on_the_mistake_only(write, code, bad, good):
    assert code in codes(write("bad.yaml", bad), select=TOPOLOGY)
    assert code not in codes(write("good.yaml", good), select=TOPOLOGY)


def test_launcher_ignored_key_names_the_flag_and_the_value_used(write):
    [found] = diagnostics(
        write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: c10d\n"),
        select=("AW110",),
    )
    assert found.message == "accelerate launch ignores `rdzv_backend: c10d` from the file and uses static"
    assert "--rdzv_backend" in found.fix


@pytest.mark.parametrize(
    "text",
    [
        "distributed_type: MULTI_GPU\nnum_processes: two\nnum_machines: [2]\ngpu_ids: 0\nmachine_rank: '1'\n",
        "distributed_type: [MULTI_GPU]\nnum_processes: 2.5\nmain_process_ip: 7\nmpirun_config: []\n",
        "distributed_type: NO\nnum_processes: null\nnum_machines: 0\nrdzv_backend: [c10d]\ntpu_env: hello\n",
    ],
)
def test_malformed_values_are_left_to_the_schema_rules(write, text):
    found = codes(write("a.yaml", text), select=("AW0", "AW1"))
    assert found and all(code.startswith("AW0") for code in found), found


def test_sagemaker_configs_are_not_checked_for_processes(write):
    text = (
        "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\nec2_instance_type: ml.p3.2xlarge\n"
        "iam_role_name: role\nnum_machines: 2\n"
    )
    assert not codes(write("a.yaml", text), select=TOPOLOGY)


# The broken cases from accelerate issues that these rules are responsible for (corpus/broken/*.txt).
@pytest.mark.parametrize(
    "case,expected",
    [
        (
            "huggingface-accelerate__1316.yaml",
            {"AW106"},
        ),  # MULTI_GPU, gpu_ids '0', 1 process: accelerate refuses
        (
            "huggingface-accelerate__1116.yaml",
            {"AW105"},
        ),  # 2 nodes x 1 GPU is valid today; ip 'example' is not
        # 10 processes on 2 machines is 5 per machine (divisible, so no AW102); the uneven nodes show in gpu_ids:
        # main_process_ip 'xxxx' is the user's redaction: a placeholder, one finding (AW150's; AW105 stays silent)
        ("huggingface-accelerate__3894.yaml", {"AW107", "AW150"}),  # node 2: 2 GPUs listed for 5 processes
        ("huggingface-accelerate__3894_node1.yaml", {"AW108", "AW150"}),  # node 1: 8 GPUs listed for 5
    ],
)
def test_broken_cases(corpus, case, expected):
    assert codes(corpus / "broken" / case, select=TOPOLOGY) == expected
