"""What `run` and `init` print is what runs (issues 29.2, 30, 33.2): one resolved workload for the summary, the
preflight, the launch line and the trainer; refusals in one line; lines a user can copy; the preflight checks
the trainer's output folder; each CPU process gets its share of the cores."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.profiles import machine

NO_YAML = ("compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"
           "num_machines: 1\nmixed_precision: 'no'\n")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `write` writes there; the commands read relative paths


def summary_values(stderr: str) -> dict[str, tuple[str, str]]:
    """The summary table's rows: setting -> (value, source)."""
    rows = {}
    for line in stderr.splitlines():
        found = re.match(r"^  (\w+)\s+(\S+)\s+(flag|plan|yaml|derived|accelerate default|json)\b", line)
        if found:
            rows[found[1]] = (found[2], found[3])
    return rows


def trainer_run_of(line: str):
    """The run the launched trainer resolves from the printed line's own arguments."""
    from accelwiz.trainer.options import parse_args
    from accelwiz.trainer.settings import resolve_settings

    words = shlex.split(line)
    start = words.index("accelwiz.trainer.train") + 1
    return resolve_settings(parse_args(words[start:]))


def test_flags_reach_summary_findings_and_the_trainer(cli):
    assert cli("init", "--model", "llama-3.1-8b", "--system", "1xA100-40GB", "--method", "lora", "--defaults",
               "-o", "a.yaml").exit_code == 0
    args = ("run", "--config", "a.yaml", "--print-node-commands", "--micro-batch", "64", "--seq-len", "8192")
    refused = cli(*args)
    assert refused.exit_code == 1, refused.stderr  # the memory rule judges the 64 x 8192 that would train
    assert "AW501" in refused.stderr and "micro-batch 64 × 8192" in refused.stderr
    assert "Effective values" not in refused.stderr  # a refusal is its findings and one line
    forced = cli(*args, "--force")
    assert forced.exit_code == 0, forced.stderr
    rows = summary_values(forced.stderr)
    assert rows["micro_batch"] == ("64", "flag") and rows["sequence_length"] == ("8192", "flag")
    assert rows["global_batch"] == ("64", "derived")
    trained = trainer_run_of(forced.stdout.strip())
    assert (trained.micro_batch.value, trained.seq_len.value) == (64, 8192)
    assert trained.micro_batch.source == trained.seq_len.source == "flag"
    assert str(trained.method.value) == rows["fine_tuning_method"][0] == "lora"


def test_dry_run_line_is_what_run_launches(cli, write, pin_local, monkeypatch):
    pin_local(machine())  # no GPU: CPU DDP, threads per process
    calls = []
    monkeypatch.setattr("accelwiz.launch.execute.execute",
                        lambda argv, env=None, **_: calls.append((list(argv), dict(env or {}))) or 0)
    write("ddp.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\nuse_cpu: true\n")
    flags = ("--model", "tiny", "--config", "ddp.yaml", "--micro-batch", "3", "--seq-len", "32",
             "--threads-per-process", "1")
    dry = cli("run", *flags, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    line = dry.stdout.strip()
    words = shlex.split(line)
    env = dict(w.split("=", 1) for w in words[:words.index("accelerate")])
    assert env == {"ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    assert words[words.index("accelerate") + 1] == "launch"
    assert words[words.index("--num_cpu_threads_per_process") + 1] == "1"
    assert "1 thread per process (--threads-per-process)" in dry.stderr
    trained = trainer_run_of(line)
    rows = summary_values(dry.stderr)
    assert (str(trained.micro_batch.value), str(trained.seq_len.value)) == (rows["micro_batch"][0],
                                                                            rows["sequence_length"][0])
    assert cli("run", *flags).exit_code == 0
    argv, launched_env = calls[0]
    # run starts accelerate's launcher in-process with the very arguments the copyable line gives it
    launched = argv[3:]
    printed = words[words.index("launch") + 1:]
    assert launched[:launched.index("--config", 3)] == [*printed[:printed.index("-m")], argv[argv.index(
        "--num_cpu_threads_per_process") + 2]]
    assert launched[launched.index("--config", 3):] == printed[printed.index("--config"):]
    assert launched_env["OMP_NUM_THREADS"] == "1" and launched_env["ACCELERATE_USE_CPU"] == "true"


def test_refusal_is_one_line_and_the_table_only_with_explain(cli, write):
    write("q.yaml", NO_YAML)
    refused = cli("run", "--config", "q.yaml", "--model", "./no-such-checkpoint")
    assert refused.exit_code == 2
    assert "Effective values" not in refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: ") and lines[1].lstrip().startswith("hint: ") and len(lines) == 2
    explained = cli("run", "--config", "q.yaml", "--model", "./no-such-checkpoint", "--explain")
    assert explained.exit_code == 2 and "Effective values for q.yaml" in explained.stderr


def test_a_flag_against_the_json_micro_batch_is_refused(cli, write):
    write("ds.json", '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1, '
                     '"zero_optimization": {"stage": 2}}')
    write("ds.yaml", "distributed_type: DEEPSPEED\nnum_processes: 1\nnum_machines: 1\n"
                     "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    refused = cli("run", "--config", "ds.yaml", "--model", "tiny", "--micro-batch", "8", "--dry-run")
    assert refused.exit_code == 2
    assert "--micro-batch 8 contradicts the deepspeed json's micro_batch 4" in refused.stderr


@pytest.mark.parametrize(("given", "expected"), [("0", "at least one thread"), ("64", "would oversubscribe")])
def test_impossible_thread_counts(cli, write, pin_local, given, expected):
    pin_local(machine())
    write("cpu.yaml", NO_YAML)
    result = cli("run", "--config", "cpu.yaml", "--model", "tiny", "--threads-per-process", given, "--dry-run")
    assert expected in result.stderr
    if given == "0":
        assert result.exit_code == 2
    else:  # corrected to the fair share, said in one line
        from accelwiz.launch.threads import available_cores

        assert result.exit_code == 0
        assert f"OMP_NUM_THREADS={available_cores()} " in result.stdout


def test_node_preflight_checks_the_trainers_output_folder(cli, write):
    write("two.yaml", "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\n"
                      "main_process_ip: 10.0.0.1\nmain_process_port: 29500\n")
    result = cli("run", "--config", "two.yaml", "--model", "tiny", "--print-node-commands",
                 "--output-dir", "/shared/out")
    assert result.exit_code == 0, result.stderr
    for line in result.stdout.splitlines():
        doctor = shlex.split(line.split(" && ")[0])
        assert doctor[doctor.index("--output-dir") + 1] == "/shared/out"
        launch = shlex.split(line.split(" && ")[1])
        assert launch[launch.index("--output-dir") + 1] == "/shared/out"  # the folder the trainer writes


def test_dpo_seq_len_answer_is_applied_or_refused(cli, write):
    write("s.yaml", "kind: dpo\nseq_len: 64\n")
    assert cli("init", "--model", "tiny", "--answers", "s.yaml", "--defaults", "-o", "d.yaml").exit_code == 0
    plan = yaml.safe_load(Path("d.plan.yaml").read_text())
    assert plan["training"]["sequence_length"] == 64
    assert (plan["training"]["max_prompt_length"], plan["training"]["max_completion_length"]) == (32, 32)
    write("t.yaml", "kind: dpo\nseq_len: 64\nmax_prompt_length: 16\nmax_completion_length: 16\n")
    refused = cli("init", "--model", "tiny", "--answers", "t.yaml", "--defaults", "-o", "e.yaml")
    assert refused.exit_code == 2 and "seq_len: 64" in refused.stderr and not Path("e.yaml").exists()


@pytest.mark.slow
def test_init_line_trains_as_one_ddp_job_on_cpus(cli, write, tmp_path):
    """The `accelerate launch` line init writes for a CPU multi-process plan, run as printed: one DDP job."""
    assert cli("init", "--model", "tiny", "--processes", "2", "--defaults").exit_code == 0
    header = [line for line in Path("accelerate.yaml").read_text().splitlines() if "accelerate launch" in line]
    line = header[0].lstrip("# ").strip()
    assert line.startswith("ACCELERATE_USE_CPU=true OMP_NUM_THREADS=")
    write("ddp_probe.py", DDP_PROBE)
    done = subprocess.run(["bash", "-c", line.replace("your_script.py", "ddp_probe.py")], capture_output=True,
                          text=True, timeout=300, env={**_env(), "PATH": str(Path(sys.executable).parent) + ":" +
                                                       _env().get("PATH", "")})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = sorted(re.findall(r"rank (\d) of (\d) (\S+) weight ([-\d.]+)", done.stdout))
    assert [(r, w, t) for r, w, t, _ in seen] == [("0", "2", "DistributedType.MULTI_CPU"),
                                                  ("1", "2", "DistributedType.MULTI_CPU")]
    assert seen[0][3] == seen[1][3]  # different data on each rank, one synchronised model


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("ACCELERATE_USE_CPU", "OMP_NUM_THREADS")}


# A few steps of a tiny model, each rank on its own data: DDP averages the gradients, so the weights agree.
DDP_PROBE = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = accelerator.prepare(model, optimizer)
generator = torch.Generator().manual_seed(100 + accelerator.process_index)
for _ in range(3):
    x = torch.randn(4, 8, generator=generator)
    loss = model(x).pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
weight = accelerator.unwrap_model(model).weight.sum().item()
print(f"rank {accelerator.process_index} of {accelerator.num_processes} {accelerator.distributed_type} "
      f"weight {weight:.6f}", flush=True)
"""
