"""The sbatch script: its content, and that bash and shellcheck (installed with apt when missing) accept it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.launch.environment import EnvChange
from accelwiz.launch.slurm import render_sbatch
from accelwiz.launch.spec import LaunchSpec
from tests.apt import ensure_programs

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
        'cd "$SLURM_SUBMIT_DIR"',
        'HEAD_NODE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        'export PET_RDZV_ID="accelwiz-$SLURM_JOB_ID"',
    ):
        assert line in text.splitlines()
    # nothing of the machine that wrote it: no cache path, no interpreter path, no home directory
    assert "/home/u" not in text and "TORCH_EXTENSIONS_DIR=" not in text and sys.executable not in text
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
        "#!/bin/bash\nscontrol() { if [ \"$2\" = node ]; then echo \"NodeName=$3 NodeAddr=10.0.0.$3 State=IDLE\"; "
        "else printf 'n1\\nn2\\n'; fi; }\n"
        'srun() { shift 2; for id in 0 1; do SLURM_NODEID=$id "$@"; done; }\n'
        'accelerate() { echo "$*"; }\nexport -f accelerate\n',
    )
    out = subprocess.run(
        ["bash", "-c", text],
        env={"SLURM_JOB_NODELIST": "n[1-2]", "SLURM_SUBMIT_DIR": str(script.parent), "SLURM_JOB_ID": "7",
             "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == 2
    # the head node's address as SLURM knows it (NodeAddr), looked up at job time
    assert "--machine_rank 0 --main_process_ip 10.0.0.n1" in out[0]
    assert "--machine_rank 1 --main_process_ip 10.0.0.n1" in out[1]


def test_bash_parses_it(script: Path):
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_shellcheck_is_clean(script: Path):
    ensure_programs(["shellcheck"], ["shellcheck"])
    result = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
