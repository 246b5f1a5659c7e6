"""The sbatch script: its content, and that bash (and shellcheck, where installed) accept it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.launch.environment import EnvChange
from accelwiz.launch.slurm import render_sbatch
from accelwiz.launch.spec import LaunchSpec

YAML = (
    "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\nmain_process_port: 29511\n"
    "rdzv_backend: c10d\ndeepspeed_config:\n  zero_stage: 2\n"
)


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    spec = LaunchSpec.from_effective(resolve(parse_text(YAML, Path("a.yaml")), None))
    text = render_sbatch(
        spec,
        "2x8 nodes.yaml",
        ["-m", "accelwiz.trainer.train", "--steps", "100"],
        env=[EnvChange("TORCH_EXTENSIONS_DIR", "/home/u/.cache/x", "why")],
    )
    path = tmp_path / "job.sbatch"
    path.write_text(text)
    return path


def test_sbatch_content(script: Path):
    text = script.read_text()
    for line in (
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --gpus-per-node=8",
        'MAIN_PROCESS_IP=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "export TORCH_EXTENSIONS_DIR=/home/u/.cache/x",
    ):
        assert line in text.splitlines()
    srun = next(line for line in text.splitlines() if line.startswith("srun "))
    assert srun.startswith("srun --nodes=2 --ntasks-per-node=1 bash -c '")
    for part in (
        "--config_file '\"'\"'2x8 nodes.yaml'\"'\"'",
        "--num_machines 2",
        "--num_processes 16",
        '--machine_rank "$SLURM_NODEID"',
        '--main_process_ip "$MAIN_PROCESS_IP"',
        "--main_process_port 29511",
        "--rdzv_backend c10d",
        "--deepspeed_multinode_launcher standard",
        "-m accelwiz.trainer.train --steps 100",
    ):
        assert part in srun


def test_sbatch_node_rank_expands_per_task(script: Path):
    """The srun line, run by bash with srun/scontrol faked, hands each node its own rank and the first host."""
    text = script.read_text().replace(
        "#!/bin/bash",
        "#!/bin/bash\nscontrol() { printf 'n1\\nn2\\n'; }\n"
        'srun() { shift 2; for id in 0 1; do SLURM_NODEID=$id "$@"; done; }\n'
        'accelerate() { echo "$*"; }\nexport -f accelerate\n',
    )
    out = subprocess.run(
        ["bash", "-c", text],
        env={"SLURM_JOB_NODELIST": "n[1-2]", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == 2
    assert "--machine_rank 0 --main_process_ip n1" in out[0] and "--machine_rank 1 --main_process_ip n1" in out[1]


def test_bash_parses_it(script: Path):
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_shellcheck_is_clean(script: Path):
    result = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
