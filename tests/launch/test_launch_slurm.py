"""The sbatch script: its content, and that bash and shellcheck (installed with apt when missing) accept it."""

from __future__ import annotations

import re
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
        preflight=False,  # the launch line alone (the preflight runs for real in test_slurm_cluster.py)
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
    # any node exiting non-zero ends every other node's task (issue 16.6)
    assert srun.startswith("srun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c '")
    for part in (
        "--config_file '\"'\"'2x8 nodes.yaml'\"'\"'",
        "--num_machines 2",
        "--num_processes 16",
        '--machine_rank "$SLURM_NODEID"',
        '--main_process_ip "$MAIN_PROCESS_IP"',
        "--main_process_port 29511",
        "--rdzv_backend c10d",
        "--max_restarts 0",
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
        'srun() { shift 3; for id in 0 1; do SLURM_NODEID=$id "$@"; done; }\n'
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
    # only node 0 hosts c10d's rendezvous store (two nodes on one host would race for the port otherwise)
    assert "--rdzv_conf is_host=1,join_timeout=120 " in out[0] and "--rdzv_conf is_host=0,join_timeout=120 " in out[1]


def test_bash_parses_it(script: Path):
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_shellcheck_is_clean(script: Path):
    ensure_programs(["shellcheck"], ["shellcheck"])
    result = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


SUBDIR_YAML = (
    "distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\nmain_process_port: 29500\n"
    "deepspeed_config:\n  deepspeed_config_file: {json}\n"
)
SUBDIR_JSON = '{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}'


def _opens_like_a_worker(written: str) -> bool:
    """accelerate's worker opens deepspeed_config_file through HfDeepSpeedConfig, from its working directory."""
    from accelerate.utils.deepspeed import HfDeepSpeedConfig

    try:
        HfDeepSpeedConfig(written)
    except ValueError:  # "Expected a string path to an existing deepspeed config, ..."
        return False
    return True


def test_config_in_a_subdirectory_naming_its_json_beside_it_is_refused(cli, tmp_path, monkeypatch):
    """`run --slurm job.sbatch --config sub/x.yaml` with `deepspeed_config_file: x.ds.json` (beside the YAML): the
    job cds to the submit directory, where the workers would not find x.ds.json. Refused in one line whose hint is
    the path that works; with the YAML written so, the job's config names a JSON the worker's opener finds."""
    from accelwiz.document import load_document

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.ds.json").write_text(SUBDIR_JSON)
    yaml = tmp_path / "sub" / "x.yaml"
    yaml.write_text(SUBDIR_YAML.format(json="x.ds.json"))
    (tmp_path / "train.py").write_text("print('ok')\n")
    assert not _opens_like_a_worker("x.ds.json")  # from the submit directory: what the job would hit

    refused = cli("run", "--slurm", "job.sbatch", "--config", "sub/x.yaml", "train.py")
    assert refused.exit_code == 2 and "Traceback" not in refused.stderr
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'x.ds.json'" in errors[0] and "submit directory" in errors[0], refused.stderr
    assert "write `deepspeed_config_file: sub/x.ds.json` in sub/x.yaml" in refused.stderr
    assert not list(tmp_path.glob("job.sbatch*"))

    yaml.write_text(SUBDIR_YAML.format(json="sub/x.ds.json"))  # as the hint says
    written = cli("run", "--slurm", "job.sbatch", "--config", "sub/x.yaml", "train.py")
    assert written.exit_code == 0, written.stderr
    text = (tmp_path / "job.sbatch").read_text()
    assert 'cd "$SLURM_SUBMIT_DIR"' in text.splitlines() and "--config_file sub/x.yaml" in text
    # the job, from the submit directory: the config it names, and the JSON that config names, as a worker opens it
    config = load_document(Path(text.split("--config_file ")[1].split()[0]))
    assert _opens_like_a_worker(config.get("deepspeed_config", "deepspeed_config_file"))


def test_node_commands_refuse_the_same_json_path(cli, tmp_path, monkeypatch):
    """--print-node-commands prints lines run from this directory: the same JSON path would fail on every node."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.ds.json").write_text(SUBDIR_JSON)
    (tmp_path / "sub" / "x.yaml").write_text(SUBDIR_YAML.format(json="x.ds.json"))
    (tmp_path / "train.py").write_text("print('ok')\n")
    refused = cli("run", "--print-node-commands", "--config", "sub/x.yaml", "train.py")
    assert refused.exit_code == 2 and "accelerate launch" not in refused.stdout
    assert "each node opens it from the directory the commands run in" in refused.stderr
    assert "write `deepspeed_config_file: sub/x.ds.json` in sub/x.yaml" in refused.stderr
    (tmp_path / "sub" / "x.yaml").write_text(SUBDIR_YAML.format(json="sub/x.ds.json"))
    printed = cli("run", "--print-node-commands", "--config", "sub/x.yaml", "train.py")
    assert printed.exit_code == 0 and printed.stdout.count("--config_file sub/x.yaml") == 2


@pytest.mark.parametrize("how", [(), ("--dry-run",)])
def test_a_local_run_refuses_the_same_json_path_before_launching(cli, tmp_path, monkeypatch, how):
    """Issue 16.7: `run --config sub/x.yaml` here starts the workers in this directory, where x.ds.json is not:
    refused before anything starts, like --slurm and --print-node-commands (the one check in command.py)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.ds.json").write_text(SUBDIR_JSON)
    (tmp_path / "sub" / "x.yaml").write_text(SUBDIR_YAML.format(json="x.ds.json").replace(
        "num_machines: 2\nnum_processes: 16", "num_machines: 1\nnum_processes: 1"))
    (tmp_path / "train.py").write_text("open('started', 'w').write('yes')\n")
    assert not _opens_like_a_worker("x.ds.json")
    for force in ((), ("--force",)):
        refused = cli("run", *how, *force, "--config", "sub/x.yaml", "train.py")
        assert refused.exit_code == 2 and "Traceback" not in refused.stderr, refused.stderr
        errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "'x.ds.json'" in errors[0], refused.stderr
        assert "the training processes open it from the directory `run` runs in" in errors[0]
        assert "write `deepspeed_config_file: sub/x.ds.json` in sub/x.yaml" in refused.stderr
        assert refused.stdout == "" and not (tmp_path / "started").exists()


def test_the_time_limit_is_the_plans_when_given_and_a_stated_default_otherwise():
    from accelwiz.errors import UsageError
    from accelwiz.launch.slurm import DEFAULT_TIME_LIMIT

    spec = LaunchSpec.from_effective(resolve(parse_text(YAML, Path("a.yaml")), None))
    default = render_sbatch(spec, "c.yaml", ["t.py"]).splitlines()
    assert f"#SBATCH --time={DEFAULT_TIME_LIMIT}" in default
    assert any(line.startswith("# No time limit in the plan") for line in default)  # the default, said
    assert "#SBATCH --time=2-12:00:00" in render_sbatch(spec, "c.yaml", ["t.py"], time_limit="2-12:00:00")
    for bad in ("2 days", "1:00\nrm -rf ~", "$(reboot)"):
        with pytest.raises(UsageError, match="not a SLURM time"):
            render_sbatch(spec, "c.yaml", ["t.py"], time_limit=bad)


def test_every_node_runs_the_preflight_before_training_unless_turned_off(cli, tmp_path, monkeypatch):
    """Issue 20: `accelwiz doctor` runs on every node first (its rank from SLURM_PROCID under srun), and only its
    success (`&&`) starts the launch; --no-preflight, or the plan's launcher.preflight: false, leaves it out."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mn.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\n"
                                      "main_process_ip: 10.0.0.1\nmain_process_port: 29600\n")
    (tmp_path / "train.py").write_text("")
    assert cli("run", "--config", "mn.yaml", "--slurm", "job.sbatch", "train.py").exit_code == 0
    srun = next(line for line in (tmp_path / "job.sbatch").read_text().splitlines() if line.startswith("srun "))
    assert "'accelwiz doctor --expect-nodes 2 --main-address \"$MAIN_PROCESS_IP\" --main-port 29600 --config " \
           "mn.yaml && accelerate launch " in srun and "--node-rank" not in srun
    lines = cli("run", "--config", "mn.yaml", "--print-node-commands", "train.py").stdout.splitlines()
    # issue 32: the job secret in front of each node's doctor, one per `run` (as the sbatch draws one per job)
    secret = re.fullmatch(r"ACCELWIZ_DOCTOR_SECRET=([0-9a-f]{32}) .*", lines[0], re.DOTALL)
    assert secret is not None, lines[0]
    assert [line.split(" && ")[0] for line in lines] == [
        f"ACCELWIZ_DOCTOR_SECRET={secret[1]} accelwiz doctor --expect-nodes 2 --main-address 10.0.0.1 "
        f"--main-port 29600 --node-rank {rank} --config mn.yaml" for rank in (0, 1)]
    again = cli("run", "--config", "mn.yaml", "--print-node-commands", "train.py").stdout
    assert again.startswith("ACCELWIZ_DOCTOR_SECRET=") and secret[1] not in again
    off = cli("run", "--config", "mn.yaml", "--print-node-commands", "--no-preflight", "train.py").stdout
    assert "accelwiz doctor" not in off and "ACCELWIZ_DOCTOR_SECRET" not in off
    assert " accelerate launch " in off.splitlines()[0]
