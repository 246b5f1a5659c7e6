"""`accelwiz run` as a use case (accelwiz/launch/run_request.py): the typer command only builds a `RunRequest`,
so the request called directly, without typer, prints and launches exactly what the command does; and the mode
the request names (here, slurm, nodes) is the one the plan is checked and refused for."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest

from accelwiz.console import Console
from accelwiz.launch.run_plan import TrainerFlags
from accelwiz.launch.run_request import RunRequest, run_for

NO_YAML = ("compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"
           "num_machines: 1\nmixed_precision: 'no'\n")
TWO_NODES = ("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
             "main_process_port: 29500\n")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def called(request: RunRequest) -> tuple[int, str, str]:
    """The use case called directly: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = run_for(request, Console(stdout=out, stderr=err, color=False))
    return code, out.getvalue(), err.getvalue()


def test_the_request_prints_the_line_and_summary_the_command_prints(cli, write):
    write("cpu.yaml", NO_YAML)
    flags = ("--model", "tiny", "--steps", "3", "--micro-batch", "2", "--seq-len", "64")
    command = cli("run", "--config", "cpu.yaml", "--threads-per-process", "1", "--dry-run", *flags, "--",
                  "--save-every", "2")
    assert command.exit_code == 0, command.stderr
    code, out, err = called(RunRequest(
        config=Path("cpu.yaml"), script_args=("--save-every", "2"), dry_run=True, threads_per_process=1,
        trainer=TrainerFlags(model="tiny", steps=3, micro_batch=2, seq_len=64)))
    assert (code, out, err) == (0, command.stdout, command.stderr)
    from accelwiz.trainer.options import parse_args

    words = shlex.split(out)
    trains = parse_args(words[words.index("accelwiz.trainer.train") + 1:])  # what each worker parses
    assert (trains.model, trains.steps, trains.micro_batch, trains.seq_len, trains.save_every) == ("tiny", 3, 2, 64, 2)


def test_node_commands_from_the_request_carry_the_output_folder_to_the_preflight(write):
    write("two.yaml", TWO_NODES)
    code, out, _ = called(RunRequest(config=Path("two.yaml"), print_node_commands=True,
                                     trainer=TrainerFlags(model="tiny", output_dir=Path("/shared/out"))))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2  # one per machine
    for line in lines:
        doctor, launch = (shlex.split(part) for part in line.split(" && "))
        assert doctor[doctor.index("--output-dir") + 1] == launch[launch.index("--output-dir") + 1] == "/shared/out"


@pytest.mark.parametrize(("request_", "mode", "opened_from"), [
    (RunRequest(), "here", "from the directory `run` runs in"),
    (RunRequest(slurm=Path("job.sbatch")), "slurm", "from the submit directory"),
    (RunRequest(print_node_commands=True), "nodes", "from the directory the commands run in"),
])
def test_the_refusal_names_where_the_request_launches(write, request_, mode, opened_from):
    """A DeepSpeed JSON beside a YAML in another folder is refused for every launch, naming where that launch's
    workers open it: the mode comes from the request alone."""
    write("cfg/ds.json", '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 1}')
    write("cfg/ds.yaml", "distributed_type: DEEPSPEED\nnum_processes: 1\nnum_machines: 1\n"
                         "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    assert request_.mode == mode and request_.here is (mode == "here")
    from accelwiz.errors import UsageError

    with pytest.raises(UsageError) as refused:
        called(RunRequest(config=Path("cfg/ds.yaml"), slurm=request_.slurm,
                          print_node_commands=request_.print_node_commands, trainer=TrainerFlags(model="tiny")))
    assert opened_from in refused.value.message
    assert not Path("job.sbatch").exists()
