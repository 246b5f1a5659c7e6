"""Multi-node from a plan, through the real CLI: the plan's machine count reaches the sbatch script, its CPU
machines get the CPU fallback and no GPU request, its rdzv_backend picks the variant, and bad input is one line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining, dump_plan

TWO_BY_EIGHT = ("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\nmachine_rank: 0\n"
                "main_process_port: 29511\nmixed_precision: bf16\n")


def write_plan(directory: Path, *, gpus: int = 8, kind: str = "slurm", rdzv_backend: str | None = None) -> None:
    (directory / "accelerate.plan.yaml").write_text(dump_plan(PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml"),
        system=PlanSystem(name="2x8xH100" if gpus else "cpu-pair", machines=2, gpus_per_machine=gpus,
                          processes_per_machine=None if gpus else 8, host_memory_bytes=None if gpus else 64 * 2**30),
        launcher=PlanLauncher(kind=kind, rdzv_backend=rdzv_backend),
        model=PlanModel(name="tiny"),
        training=PlanTraining(micro_batch=1, sequence_length=64, precision="bf16"),
    )))


@pytest.fixture()
def two_nodes(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(TWO_BY_EIGHT)
    return tmp_path


def test_a_two_node_plan_gives_a_two_node_sbatch(cli, two_nodes):
    """The issue's regression: 2 machines x 8 GPUs -> --nodes=2, 8 GPUs per node, world size 16, c10d by default."""
    write_plan(two_nodes)
    result = cli("run", "--slurm", "job.sbatch")
    assert result.exit_code == 0, result.stderr
    script = (two_nodes / "job.sbatch").read_text()
    for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=1", "#SBATCH --gpus-per-node=8",
                 'export PET_RDZV_ID="accelwiz-$SLURM_JOB_ID"'):
        assert line in script.splitlines()
    srun = next(line for line in script.splitlines() if line.startswith("srun "))
    assert "--num_machines 2 --num_processes 16" in srun and "--rdzv_backend c10d" in srun
    assert "--config_file accelerate.yaml" in srun and "ACCELERATE_USE_CPU" not in script
    assert str(two_nodes) not in script  # relative to the submit directory, nothing of this machine


def test_cpu_plan_and_static_variant(cli, two_nodes):
    write_plan(two_nodes, gpus=0, rdzv_backend="static")
    assert cli("run", "--slurm", "job.sbatch").exit_code == 0
    script = (two_nodes / "job.sbatch").read_text()
    assert "--gpus-per-node" not in script and "export ACCELERATE_USE_CPU=true" in script.splitlines()
    assert "--rdzv_backend static" in script and "PET_RDZV_ID" not in script
    lines = cli("run", "--print-node-commands", "--no-preflight").stdout.strip().splitlines()
    assert [shlex.split(line)[0] for line in lines] == ["ACCELERATE_USE_CPU=true"] * 2
    assert all("--rdzv_backend static" in line for line in lines)


def test_absolute_paths_under_the_submit_directory_are_written_relative(cli, two_nodes):
    write_plan(two_nodes)
    script = two_nodes / "train.py"
    script.write_text("print('hi')\n")
    result = cli("run", "--config", str(two_nodes / "accelerate.yaml"), "--slurm", "job.sbatch", str(script))
    assert result.exit_code == 0, result.stderr
    text = (two_nodes / "job.sbatch").read_text()
    assert "--config_file accelerate.yaml" in text and " train.py" in text and str(two_nodes) not in text


def test_without_a_plan_aw104_still_refuses(cli, two_nodes):
    """No main_process_ip and no plan: `check` reports AW104; the per-node launchers pass the address themselves."""
    result = cli("check", "accelerate.yaml", "--select", "AW104")
    assert result.exit_code == 1 and "AW104" in result.stdout
    write_plan(two_nodes, kind="local")
    assert cli("check", "accelerate.yaml", "--select", "AW104").exit_code == 1
    write_plan(two_nodes, kind="slurm")
    assert cli("check", "accelerate.yaml", "--select", "AW104").exit_code == 0


def test_bad_input_is_one_line_and_exit_2(cli, two_nodes):
    write_plan(two_nodes)
    missing_dir = cli("run", "--slurm", "no/such/dir/job.sbatch")
    assert missing_dir.exit_code == 2 and "cannot write no/such/dir/job.sbatch" in missing_dir.stderr
    assert "hint: create it first (mkdir -p no/such/dir)" in missing_dir.stderr
    assert not list(two_nodes.rglob("*.sbatch*"))  # nothing half-written
    (two_nodes / "accelerate.yaml").write_text(TWO_BY_EIGHT.replace("num_processes: 16\n", ""))
    for how in (("--slurm", "job.sbatch"), ("--print-node-commands",)):
        refused = cli("run", *how)
        assert refused.exit_code == 2 and "no num_processes" in refused.stderr, refused.stderr
    (two_nodes / "accelerate.yaml").write_text(TWO_BY_EIGHT)
    (two_nodes / "accelerate.plan.yaml").write_text("system: {machines: two}\n")
    broken = cli("run", "--slurm", "job.sbatch")
    assert broken.exit_code == 2 and "accelerate.plan.yaml: invalid plan" in broken.stderr
