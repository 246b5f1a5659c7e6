"""Pure launch pieces: the spec read from a YAML, the argv, node commands and environment changes (golden)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.errors import InputError
from accelwiz.launch.command import build_argv, launcher_prefix, node_commands, yaml_ignored_flags
from accelwiz.launch.environment import EnvChange, apply, environment_changes
from accelwiz.launch.spec import LaunchSpec


def spec_of(text: str) -> LaunchSpec:
    return LaunchSpec.from_effective(resolve(parse_text(text, Path("a.yaml")), None))


def test_spec_reads_launch_values_and_survives_bad_types():
    spec = spec_of(
        "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29501\nrdzv_backend: c10d\nsame_network: true\n"
        "deepspeed_config:\n  zero_stage: 3\n"
    )
    assert (spec.distributed_type, spec.num_processes, spec.num_machines, spec.processes_per_machine) == (
        "DEEPSPEED",
        16,
        2,
        8,
    )
    assert (spec.main_process_ip, spec.main_process_port, spec.rdzv_backend, spec.same_network, spec.zero_stage) == (
        "10.0.0.1",
        29501,
        "c10d",
        True,
        3,
    )
    bad = spec_of("distributed_type: NO\nnum_processes: 1\nnum_machines: [1]\nmixed_precision: no\n")
    assert (bad.distributed_type, bad.num_processes, bad.num_machines, bad.mixed_precision) == ("NO", 1, 1, "no")


@pytest.mark.parametrize("topology", ["num_processes: two\n", "num_machines: 2\n", "num_processes: -1\n"])
def test_a_spec_without_a_process_count_is_refused_not_invented(topology):
    # `accelerate launch` stops without one; node commands and SLURM scripts must not make one up
    with pytest.raises(InputError, match="num_processes"):
        spec_of(f"distributed_type: MULTI_GPU\n{topology}")


def test_the_spec_reads_the_stage_accelerate_fills_and_an_unquoted_no():
    assert spec_of("distributed_type: DEEPSPEED\nnum_processes: 2\n").zero_stage == 2  # accelerate's default
    assert spec_of("distributed_type: NO\nnum_processes: 1\n").distributed_type == "NO"


def test_build_argv_is_the_launcher_module_with_the_config_first():
    argv = build_argv(Path("cfg.yaml"), "train.py", ["--lr", "3e-4"])
    assert argv == [
        sys.executable,
        "-m",
        "accelwiz.launch.launcher",  # accelerate launch in-process, keeping exit codes (launch/launcher.py)
        "--config_file",
        "cfg.yaml",
        "train.py",
        "--lr",
        "3e-4",
    ]
    assert launcher_prefix() == argv[:3]


def test_build_argv_passes_the_yaml_values_accelerate_ignores():
    spec = spec_of("distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: c10d\nsame_network: true\n")
    assert yaml_ignored_flags(spec) == ["--rdzv_backend", "c10d", "--same_network"]
    argv = build_argv(Path("c.yaml"), "t.py", spec=spec, prefix=["accelerate", "launch"])
    assert argv == [
        "accelerate",
        "launch",
        "--config_file",
        "c.yaml",
        "--rdzv_backend",
        "c10d",
        "--same_network",
        "t.py",
    ]
    assert yaml_ignored_flags(spec_of("distributed_type: MULTI_GPU\nnum_processes: 2\n")) == []


def test_node_commands_one_line_per_rank_with_every_topology_value():
    spec = spec_of("distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n")
    lines = node_commands(spec, "cfg.yaml", "train.py", ["--lr", "1e-4"], preflight=False)
    assert lines == [
        f"accelerate launch --config_file cfg.yaml --num_machines 2 --num_processes 16 --machine_rank {rank} "
        "--main_process_ip 10.0.0.1 --main_process_port 29500 --rdzv_backend c10d --max_restarts 0 "
        f"--rdzv_conf is_host={1 - rank},join_timeout=120 --deepspeed_multinode_launcher standard train.py --lr 1e-4"
        for rank in (0, 1)
    ]
    no_ip = node_commands(
        spec_of("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nrdzv_backend: static\n"),
        "c.yaml",
        "t.py",
        preflight=False,
    )
    assert '--main_process_ip "${MAIN_PROCESS_IP:?' in no_ip[1] and "--rdzv_backend static" in no_ip[1]
    assert "deepspeed" not in no_ip[0]
    # runnable as printed: the address comes from the environment, and its absence is one clear line
    fake = 'accelerate() { echo "$*"; }\n'
    unset = subprocess.run(["bash", "-c", fake + no_ip[1]], env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                           text=True)
    assert unset.returncode != 0 and "export MAIN_PROCESS_IP=<address of machine 0>" in unset.stderr
    given = subprocess.run(["bash", "-c", fake + no_ip[1]], env={"PATH": "/usr/bin:/bin", "MAIN_PROCESS_IP": "10.1.1.1"},
                           capture_output=True, text=True, check=True)
    assert "--machine_rank 1 --main_process_ip 10.1.1.1 " in given.stdout


def test_cpu_only_multi_gpu_gets_accelerate_use_cpu():
    spec = spec_of("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    changes = environment_changes(spec, gpu_count=0, environ={"HOME": "/home/u"})
    assert [str(c) for c in changes] == ["ACCELERATE_USE_CPU=true"]
    assert environment_changes(spec, gpu_count=2, environ={}) == []
    assert environment_changes(spec, gpu_count=0, environ={"ACCELERATE_USE_CPU": "false"}) == []  # user's choice
    assert (
        environment_changes(spec_of("distributed_type: MULTI_GPU\nnum_processes: 1\n"), gpu_count=0, environ={}) == []
    )


def test_deepspeed_gets_a_persistent_torch_extensions_cache():
    spec = spec_of("distributed_type: DEEPSPEED\nnum_processes: 2\n")
    changes = environment_changes(spec, gpu_count=0, environ={"HOME": "/home/u"}, build="py311-torch2.13.0+cpu")
    assert [str(c) for c in changes] == [
        "TORCH_EXTENSIONS_DIR=/home/u/.cache/accelwiz/torch_extensions/py311-torch2.13.0+cpu"
    ]
    xdg = environment_changes(spec, gpu_count=8, environ={"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}, build="b")
    assert [str(c) for c in xdg] == ["TORCH_EXTENSIONS_DIR=/c/accelwiz/torch_extensions/b"]
    assert environment_changes(spec, gpu_count=8, environ={"TORCH_EXTENSIONS_DIR": "/mine"}) == []


def test_torch_build_names_python_and_the_installed_torch():
    from accelwiz.launch.environment import torch_build

    assert re.fullmatch(r"py3\d+-torch\S+", torch_build())


def test_apply_adds_changes_without_touching_the_rest():
    env = apply([EnvChange("A", "1", "why")], {"PATH": "/bin", "A": "0"})
    assert env == {"PATH": "/bin", "A": "1"}
