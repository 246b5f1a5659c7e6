"""The four disagreements of issue 9, through the CLI: `check --explain`, the rules, the estimator and `run`
read every value from `accelwiz/effective.py`, so within one command they agree.

Each test runs the real commands in-process (`cli` fixture); the machine is a pinned preset (`--system`),
so every assertion runs on every machine. `run` only prints (`--dry-run`, `--print-node-commands`, `--slurm`):
nothing is launched.
"""

from __future__ import annotations

import json

import pytest

YAML_WITH_JSON = ("distributed_type: DEEPSPEED\nnum_processes: 8\n"
                  "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
JSON_STAGE_AUTO = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
                   "zero_optimization": {"stage": "auto"}, "bf16": {"enabled": "auto"}}


def explained(cli, *paths: str) -> dict[str, list[str]]:
    """`check --explain`'s table as {setting: [value, source, ...]}."""
    result = cli("check", "--explain", *paths)
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("  ")]
    return {row[0]: row[1:] for row in rows[1:] if row}


def findings(cli, *args: str) -> tuple[int, dict[str, list[str]]]:
    """(exit code, {code: [messages]}) of `check --format json`."""
    result = cli("check", "--format", "json", *args)
    found: dict[str, list[str]] = {}
    for item in json.loads(result.stdout or "[]"):
        found.setdefault(item["code"], []).append(item["message"])
    return result.exit_code, found


@pytest.fixture()
def stage_auto(write, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # accelerate opens deepspeed_config_file relative to where it is launched
    write("ds.json", json.dumps(JSON_STAGE_AUTO))
    return str(write("ds.yaml", YAML_WITH_JSON))


def test_a_json_stage_auto_is_zero2_for_explain_the_estimator_and_run(cli, stage_auto):
    assert explained(cli, stage_auto)["zero_stage"][:2] == ["2", "derived"]  # "auto" -> 2 by accelerate
    # the memory rules plan ZeRO-2, not DDP: llama-8b under DDP (about 190 GiB per GPU) was AW501, exit 1
    code, found = findings(cli, stage_auto, "--model", "llama-8b", "--system", "8xH100-80GB")
    assert "AW501" not in found and code == 0
    assert any(message.startswith("ZeRO-2 is slower than needed") for message in found["AW503"])
    summary = cli("run", "--model", "tiny", "--config", stage_auto, "--dry-run")
    assert summary.exit_code == 0, summary.stderr
    assert f"run: {stage_auto}: DEEPSPEED, ZeRO-2, 8 processes on 1 machine" in summary.stderr


def test_fsdp_config_version_2_is_fsdp2_for_explain_and_the_estimator(cli, write):
    path = str(write("fsdp.yaml", "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  version: 2\n"))
    rows = explained(cli, path)
    assert rows["fsdp_version"][:2] == ["2", "yaml"] and "fsdp_config.version" in rows["fsdp_version"][-1]
    _, found = findings(cli, path, "--model", "gpt2", "--system", "8xH100-80GB")
    # no fsdp_auto_wrap_policy: accelerate's NO_WRAP, the whole model one unit (estimate/fsdp_wrap.py)
    assert [m.split(" is slower")[0] for m in found["AW503"]] == ["FSDP2 full shard, one unit"]
    # FSDP2-only rules read the same version: fsdp_state_dict_type LOCAL_STATE_DICT is refused by FSDP2 only
    local = str(write("local.yaml", "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  version: 2\n"
                                    "  state_dict_type: LOCAL_STATE_DICT\n"))
    assert "AW303" in findings(cli, local)[1]


def test_an_unquoted_no_is_no_for_topology_hardware_explain_and_the_estimator(cli, write):
    path = str(write("no.yaml", "distributed_type: NO\nnum_processes: 2\nmixed_precision: bf16\n"))
    row = explained(cli, path)["distributed_type"]
    assert row[:2] == ["NO", "yaml"] and "YAML" in " ".join(row)
    _, found = findings(cli, path, "--model", "llama-8b", "--system", "8xV100-32GB")
    assert found["AW112"] == ["`distributed_type: 'NO'` starts one process, not num_processes (2)"]  # topology
    assert any(m.startswith("bf16 on Tesla V100") for m in found["AW604"])  # hardware: a GPU run
    assert any("with single GPU over 1 GPU(s)" in m for m in found["AW501"])  # the estimator builds a plan
    summary = cli("run", "--model", "tiny", "--config", path, "--dry-run", "--force")
    assert f"run: {path}: NO, 2 processes on 1 machine" in summary.stderr


TWO_MACHINES = ("distributed_type: MULTI_GPU\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
                "main_process_port: 29500\n")


def test_two_machines_without_num_processes_are_refused_not_given_one_process(cli, write, tmp_path):
    path = str(write("two.yaml", TWO_MACHINES))
    row = explained(cli, path)["num_processes"]
    assert row[0] == "-" and "--num_processes" in " ".join(row)
    _, found = findings(cli, path)
    assert "AW111" in found
    nodes = cli("run", "--model", "tiny", "--config", path, "--print-node-commands")
    assert nodes.exit_code == 2 and "--num_processes" not in nodes.stdout
    assert "no num_processes" in nodes.stderr and "Traceback" not in nodes.stderr
    job = tmp_path / "job.sbatch"
    slurm = cli("run", "--model", "tiny", "--config", path, "--slurm", str(job))
    assert slurm.exit_code == 2 and not job.exists()
    # with the count written, explain and the node commands say the same total
    counted = str(write("counted.yaml", TWO_MACHINES + "num_processes: 16\n"))
    assert explained(cli, counted)["num_processes"][:2] == ["16", "yaml"]
    lines = cli("run", "--model", "tiny", "--config", counted, "--print-node-commands").stdout.strip().splitlines()
    assert len(lines) == 2 and all("--num_processes 16" in line and "--num_machines 2" in line for line in lines)


def test_the_plan_beside_the_yaml_is_the_third_input_of_explain(cli, write):
    from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanSystem, PlanTraining, dump_plan

    path = str(write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n"))
    plan = PlanFile(files=PlanFiles(accelerate="accelerate.yaml"), model=PlanModel(name="gpt2"),
                    system=PlanSystem(name="8xH100-80GB", gpus_per_machine=8),
                    training=PlanTraining(micro_batch=4, gradient_accumulation=2, sequence_length=1024))
    write("accelerate.plan.yaml", dump_plan(plan))
    rows = explained(cli, path)
    assert rows["sequence_length"][:2] == ["1024", "plan"]
    assert rows["micro_batch"][:2] == ["4", "plan"] and rows["gradient_accumulation"][:2] == ["2", "plan"]
    assert rows["global_batch"][:2] == ["64", "derived"]  # 4 x 2 x 8 processes
