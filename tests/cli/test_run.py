"""`accelwiz run` as a command: preflight refusal, --force, the exact argv, dry run, SLURM, usage errors.

In-process tests replace `accelwiz.launch.execute.execute` (the one place a process starts) and assert on the
argv it would have run; the slow tests at the end start the real `accelerate launch`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from accelwiz.launch.threads import available_cores
from tests.profiles import machine

NO_YAML = (
    "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"
    "num_machines: 1\nmixed_precision: 'no'\n"
)
TYPO_YAML = NO_YAML + "mixed_precison: bf16\n"  # AW001: accelerate itself rejects the unknown key


@pytest.fixture()
def launched(monkeypatch):
    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_execute(argv, env=None, **_):
        calls.append((list(argv), dict(env or {})))
        return 0

    monkeypatch.setattr("accelwiz.launch.execute.execute", fake_execute)
    return calls


def test_builtin_trainer_with_its_flags(cli, write, launched, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write("accelerate.yaml", NO_YAML)
    result = cli("run", "--model", "tiny", "--steps", "7", "--lr", "0.01", "--resume")
    assert result.exit_code == 0, result.stderr
    argv, _ = launched[0]
    assert argv[:5] == [sys.executable, "-m", "accelwiz.launch.launcher", "--config_file", "accelerate.yaml"]
    # use_cpu: each process gets this machine's cores / processes threads (launch/threads.py)
    # the free cores when the run starts (other work on this machine may hold some: launch/threads.py)
    assert argv[5] == "--num_cpu_threads_per_process" and 1 <= int(argv[6]) <= available_cores()
    assert argv[7].endswith("accelwiz/trainer/train.py") and Path(argv[7]).is_file()
    assert argv[8:] == ["--config", "accelerate.yaml", "--steps", "7", "--lr", "0.01", "--resume", "--model", "tiny"]
    # the trainer records its exit status there, so a refusal inside it is not reported as accelerate's 1
    assert "ACCELWIZ_EXIT_DIR" in launched[0][1]
    assert "run: accelerate.yaml: NO, 1 process on 1 machine" in result.stderr
    # the `$` line is the copyable `accelerate launch` form of the same arguments (the trainer by module name)
    shown = next(line for line in result.stderr.splitlines() if line.startswith("$ "))
    words = shlex.split(shown[2:])
    assert words[words.index("accelerate"):words.index("-m")] == ["accelerate", "launch", *argv[3:7]]
    assert words[words.index("accelwiz.trainer.train") + 1:] == argv[8:]
    assert result.stdout == ""  # talk goes to stderr


def test_user_script_and_its_args_after_double_dash(cli, write, launched, tmp_path):
    config, script = write("c.yaml", NO_YAML), write("train.py", "print('hi')\n")
    result = cli("run", "--config", str(config), str(script), "--", "--lr", "3e-4", "--steps", "2")
    assert result.exit_code == 0, result.stderr
    assert launched[0][0][7:] == ["-m", "accelwiz.launch.child", str(script), "--lr", "3e-4", "--steps", "2"]


def test_dry_run_prints_env_and_command_and_starts_nothing(cli, write, launched, pin_local):
    pin_local(machine())  # the CPU fallback is for a machine without GPUs
    config = write("ddp.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\nrdzv_backend: c10d\n")
    result = cli("run", "--model", "tiny", "--config", str(config), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert launched == []
    words = shlex.split(result.stdout)  # one line a user can copy: the environment, then accelerate launch
    assert words[0] == "ACCELERATE_USE_CPU=true"  # this machine has no GPU
    assert words[2:8] == ["accelerate", "launch", "--config_file", str(config), "--rdzv_backend", "c10d"]
    assert "AW601 (gpu-distribution-without-gpu) handled" in result.stderr


def test_config_with_errors_is_refused_and_force_launches(cli, write, launched):
    config = write("typo.yaml", TYPO_YAML)
    refused = cli("run", "--model", "tiny", "--config", str(config))
    assert refused.exit_code == 1
    assert "AW001" in refused.stderr and "not launching: " in refused.stderr and "--force" in refused.stderr
    assert launched == []
    forced = cli("run", "--model", "tiny", "--config", str(config), "--force")
    assert forced.exit_code == 0 and len(launched) == 1
    assert "launching despite 1 error(s)" in forced.stderr


def test_missing_default_config_says_run_init(cli, monkeypatch, tmp_path, launched):
    monkeypatch.chdir(tmp_path)
    result = cli("run", "--model", "tiny")
    assert result.exit_code == 2
    assert "config file `accelerate.yaml` not found" in result.stderr and "accelwiz init" in result.stderr


def test_trainer_flags_with_a_script_are_a_usage_error(cli, write, launched):
    config, script = write("c.yaml", NO_YAML), write("t.py", "")
    result = cli("run", "--config", str(config), "--steps", "3", str(script))
    assert result.exit_code == 2 and "--steps belong to the built-in trainer" in result.stderr
    assert cli("run", "--config", str(config), "missing.py").exit_code == 2


def test_deepspeed_json_is_not_a_launch_config(cli, write, launched):
    config = write("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}')
    result = cli("run", "--model", "tiny", "--config", str(config))
    assert result.exit_code == 2 and "not an Accelerate config" in result.stderr


def test_slurm_and_node_commands(cli, write, launched, tmp_path):
    config = write(
        "mn.yaml", "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\nmain_process_ip: 10.1.1.1\n"
    )
    job = tmp_path / "job.sbatch"
    assert cli("run", "--model", "tiny", "--config", str(config), "--slurm", str(job)).exit_code == 0
    text = job.read_text()
    assert "#SBATCH --nodes=2" in text and "-m accelwiz.trainer.train" in text
    subprocess.run(["bash", "-n", str(job)], check=True)
    nodes = cli("run", "--model", "tiny", "--config", str(config), "--print-node-commands", "--steps", "5")
    lines = nodes.stdout.splitlines()
    assert len(lines) == 2 and "--machine_rank 1" in lines[1] and lines[1].endswith("--steps 5 --model tiny")
    assert launched == []


@pytest.mark.slow
def test_failing_script_exit_code_passes_through(write, tmp_path):
    config, script = write("c.yaml", NO_YAML), write("fail.py", "import sys\nsys.exit(3)\n")
    result = subprocess.run(
        [sys.executable, "-m", "accelwiz", "run", "--config", str(config), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 3, result.stderr


@pytest.mark.slow
def test_init_defaults_then_run_is_a_complete_first_experience(tmp_path):
    """The README's train command: `accelwiz init --model tiny --defaults && accelwiz run` trains the toy model
    it names, at its planned sequence (the toy's 256 positions)."""
    init = subprocess.run(
        [sys.executable, "-m", "accelwiz", "init", "--model", "tiny", "--defaults"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert init.returncode == 0, init.stderr
    run = subprocess.run(
        [sys.executable, "-m", "accelwiz", "run", "--steps", "4"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / "accelwiz-run" / "run_report.json").read_text())
    assert report["steps"] == 4 and report["loss_last"] < report["loss_first"]
    # regression: the micro-batch, accumulation and sequence length init planned are what trained
    planned = yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())["training"]
    assert (report["micro_batch"], report["gradient_accumulation_steps"], report["seq_len"]) == (
        planned["micro_batch"], planned["gradient_accumulation"], planned["sequence_length"])
    assert report["settings"]["micro_batch"]["source"] == "plan" and report["model"] == "tiny"
    assert report["settings"]["model"] == {"value": "tiny", "source": "plan"} and planned["sequence_length"] == 256
    # resuming a finished run trains nothing and still writes strict JSON (no NaN losses)
    again = subprocess.run(
        [sys.executable, "-m", "accelwiz", "run", "--steps", "4", "--resume"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing left to train" in again.stderr

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    report = json.loads((tmp_path / "accelwiz-run" / "run_report.json").read_text(), parse_constant=refuse)
    assert report["steps"] == 4 and report["loss_first"] is None


def test_an_unknown_option_is_named_as_one_not_as_a_missing_script(cli, write, launched):
    config = write("c.yaml", NO_YAML)
    result = cli("run", "--model", "tiny", "--config", str(config), "--stepz", "5")
    assert result.exit_code == 2 and launched == []
    assert "built-in trainer: unrecognized arguments: --stepz 5" in result.stderr and "not found" not in result.stderr


def test_builtin_trainer_takes_its_other_flags_after_double_dash(cli, write, launched):
    """`--save-every` has no `run` option; after `--` it was taken for a script named `--save-every`."""
    config = write("c.yaml", NO_YAML)
    result = cli("run", "--model", "tiny", "--config", str(config), "--steps", "6", "--", "--save-every", "3")
    assert result.exit_code == 0, result.stderr
    assert launched[0][0][7].endswith("train.py")
    assert launched[0][0][8:] == ["--config", str(config), "--steps", "6", "--model", "tiny", "--save-every", "3"]
    bad = cli("run", "--model", "tiny", "--config", str(config), "--", "--save-every", "three")
    assert bad.exit_code == 2 and "argument --save-every: invalid int value: 'three'" in bad.stderr


def test_usage_hint_quotes_a_script_path_with_spaces(cli, write, launched):
    config, script = write("c.yaml", NO_YAML), write("my train.py", "")
    result = cli("run", "--config", str(config), "--steps", "3", str(script))
    assert result.exit_code == 2
    assert f"accelwiz run {shlex.quote(str(script))} -- --steps 100" in result.stderr


def test_multi_node_plans_are_checked_for_the_cluster_not_this_login_node(cli, write, launched, tmp_path, pin_local):
    """--slurm and --print-node-commands pass main_process_ip/port themselves, and the nodes they plan for are
    not this GPU-less machine: neither AW104 nor AW601 may refuse them (both refuse a launch here)."""
    pin_local(machine())  # a login node without GPUs, on every machine
    config = write(
        "mn.yaml",
        "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\ndeepspeed_config:\n  zero_stage: 2\n",
    )
    script, job = write("train.py", ""), tmp_path / "job.sbatch"
    here = cli("run", "--config", str(config), str(script))
    assert here.exit_code == 1 and "AW104" in here.stderr and "AW601" in here.stderr
    slurm = cli("run", "--config", str(config), "--slurm", str(job), str(script))
    assert slurm.exit_code == 0, slurm.stderr
    assert "AW601" not in slurm.stderr and "AW104 (multi-node-without-main-process) handled" in slurm.stderr
    assert '--main_process_ip "$MAIN_PROCESS_IP"' in job.read_text()
    nodes = cli("run", "--config", str(config), "--print-node-commands", str(script))
    assert nodes.exit_code == 0, nodes.stderr
    assert len(nodes.stdout.splitlines()) == 2 and '--main_process_ip "${MAIN_PROCESS_IP:?' in nodes.stdout
    assert launched == []
