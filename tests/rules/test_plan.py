"""The plan file in `check`: found beside the YAML (or --plan), its workload and system drive the memory and
hardware rules, and a plan that disagrees with its files is AW114 / AW115. Through the real CLI and engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.plan_file import (
    PlanFile,
    PlanFiles,
    PlanLauncher,
    PlanModel,
    PlanSystem,
    PlanTraining,
    dump_plan,
    plan_path_for,
)

DS_YAML = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_machines: {machines}\n"
           "num_processes: {processes}\nmachine_rank: 0\nuse_cpu: false\n"
           "deepspeed_config:\n  deepspeed_config_file: ds_config.json\n  zero3_init_flag: false\n")


def ds_json(micro_batch: int = 1, stage: int = 1, accumulation: int = 1) -> str:
    return json.dumps({"train_micro_batch_size_per_gpu": micro_batch, "gradient_accumulation_steps": accumulation,
                       "gradient_clipping": 1.0, "bf16": {"enabled": True}, "zero_optimization": {"stage": stage}})


def plan(*, machines: int = 1, micro_batch: int = 1, launcher: str = "local", precision: str = "bf16",
         deepspeed: str | None = "ds_config.json", model: str = "llama-3.1-8b") -> PlanFile:
    name = "8xH100-80GB" if machines == 1 else "2x8xH100"
    return PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml", deepspeed=deepspeed),
        system=PlanSystem(name=name, machines=machines, gpus_per_machine=8),
        launcher=PlanLauncher(kind=launcher),
        model=PlanModel(name=model),
        training=PlanTraining(micro_batch=micro_batch, sequence_length=2048, precision=precision),
    )


@pytest.fixture()
def wizard_like(tmp_path: Path, monkeypatch):
    """The files `accelwiz init --system 8xH100-80GB --model llama-3.1-8b --defaults` writes, with its plan (and
    the working directory there, as after `init`: the JSON path resolves from it, as accelerate's workers do)."""
    monkeypatch.chdir(tmp_path)

    def make(*, machines: int = 1, micro_batch: int = 1, the_plan: PlanFile | None = None) -> Path:
        yaml = tmp_path / "accelerate.yaml"
        yaml.write_text(DS_YAML.format(machines=machines, processes=8 * machines))
        (tmp_path / "ds_config.json").write_text(ds_json(micro_batch))
        plan_path_for(yaml).write_text(dump_plan(the_plan or plan(machines=machines)))
        return yaml

    return make


def codes_of(result) -> dict[str, dict]:
    return {d["code"]: d for d in json.loads(result.stdout)}


def test_the_wizards_output_with_its_plan_is_clean(cli, wizard_like):
    result = cli("check", str(wizard_like()), "--format", "json")
    found = codes_of(result)
    assert result.exit_code == 0
    assert not [c for c, d in found.items() if d["severity"] in ("error", "warning")]


def test_a_hand_edit_that_breaks_the_fit_is_a_memory_error_and_a_plan_finding(cli, wizard_like):
    """Micro-batch 1 -> 16 in the JSON: the plan's workload on the plan's system no longer fits (AW501), and the
    JSON disagrees with the plan (AW114)."""
    yaml = wizard_like()
    (yaml.parent / "ds_config.json").write_text(ds_json(micro_batch=16))
    result = cli("check", str(yaml), "--format", "json")
    found = codes_of(result)
    assert result.exit_code == 1 and {"AW501", "AW114"} <= set(found)
    assert "micro-batch 16 × 2048" in found["AW501"]["message"] and "llama-3.1-8b" in found["AW501"]["message"]
    assert found["AW114"]["file"].endswith("ds_config.json")
    assert found["AW114"]["message"] == "micro-batch 16 disagrees with accelerate.plan.yaml, which planned 1"


def test_a_plan_edit_that_breaks_the_fit_is_a_memory_error(cli, tmp_path):
    """Without a DeepSpeed JSON the micro-batch lives only in the plan: 4 -> 16 there is AW501 alone."""
    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text("distributed_type: FSDP\nnum_machines: 1\nnum_processes: 8\nmixed_precision: bf16\n"
                    "fsdp_config:\n  fsdp_version: 2\n")
    for micro_batch, expected_exit in ((4, 0), (16, 1)):
        plan_path_for(yaml).write_text(dump_plan(plan(micro_batch=micro_batch, deepspeed=None, model="llama-3.2-1b")))
        result = cli("check", str(yaml), "--select", "AW5,AW114", "--format", "json")
        assert result.exit_code == expected_exit, result.stdout
        assert ("AW501" in codes_of(result)) is (micro_batch == 16)


def test_plan_disagreements_point_at_the_config_keys(cli, tmp_path):
    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text(DS_YAML.format(machines=1, processes=8))
    (tmp_path / "ds_config.json").write_text(ds_json(accumulation=4))
    plan_path_for(yaml).write_text(dump_plan(plan(machines=2, precision="fp16")))
    result = cli("check", str(yaml), "--select", "AW114", "--format", "json")
    messages = sorted(d["message"] for d in json.loads(result.stdout))
    assert result.exit_code == 1
    assert messages == [
        "gradient accumulation 4 disagrees with accelerate.plan.yaml, which planned 1",
        "num_machines 1 disagrees with accelerate.plan.yaml, which planned 2 machine(s)",
        "num_processes 8 disagrees with accelerate.plan.yaml, which planned 2 machine(s) x 8 GPU(s) = 16",
        "precision bf16 disagrees with accelerate.plan.yaml, which planned fp16",
    ]


def test_a_plan_naming_missing_files_is_aw115(cli, wizard_like):
    yaml = wizard_like()
    (yaml.parent / "ds_config.json").rename(yaml.parent / "ds_zero1.json")
    result = cli("check", str(yaml), "--select", "AW115", "--format", "json")
    messages = [d["message"] for d in json.loads(result.stdout)]
    assert result.exit_code == 1
    assert messages == [f"accelerate.plan.yaml names the DeepSpeed JSON `ds_config.json`, which does not exist "
                        f"(looked in {yaml.parent})"]


def test_a_plan_for_another_yaml_given_with_plan_is_aw115(cli, wizard_like, tmp_path):
    yaml = wizard_like()
    other = tmp_path / "other.yaml"
    other.write_text(yaml.read_text())
    result = cli("check", str(other), "--plan", str(plan_path_for(yaml)), "--select", "AW115", "--format", "json")
    assert [d["message"] for d in json.loads(result.stdout)] == [
        "accelerate.plan.yaml belongs to `accelerate.yaml`, not to `other.yaml`"]


def test_an_invalid_plan_is_one_input_error(cli, wizard_like):
    yaml = wizard_like()
    plan_path_for(yaml).write_text("files: {accelerate: accelerate.yaml}\nsystem: {name: x, machines: 0}\n")
    result = cli("check", str(yaml))
    assert result.exit_code == 2
    assert "accelerate.plan.yaml: invalid plan at `system.machines`" in result.stderr


def test_aw104_is_silent_when_the_plans_launcher_supplies_the_rendezvous(cli, wizard_like):
    """A 2-node YAML without main_process_ip: AW104 without a plan, and with a plan that launches locally; not
    with a plan launched by SLURM or per-node commands, which pass rank and address to each node."""
    yaml = wizard_like(machines=2)
    plan_file = plan_path_for(yaml)
    for launcher, fires in (("slurm", False), ("node-commands", False), ("local", True), (None, True)):
        if launcher is None:
            plan_file.unlink()
        else:
            plan_file.write_text(dump_plan(plan(machines=2, launcher=launcher)))
        result = cli("check", str(yaml), "--select", "AW104,AW114", "--format", "json")
        assert ("AW104" in codes_of(result)) is fires, launcher
        assert "AW114" not in codes_of(result)  # 2 machines x 8 GPUs = 16 processes, as the YAML says


def test_qlora_for_files_without_a_plan(cli, write):
    """--qlora reaches the estimate: llama-3.1-8b at 1024 tokens on a 24 GB A10G does not fit in full or as LoRA
    (16 GB of bf16 weights plus activations), and runs as QLoRA (a 4-bit base; tight since the kbit-prepared
    fp32 stream is counted: AW505 warns, no AW501 error)."""
    yaml = write("a.yaml", "distributed_type: 'NO'\nnum_processes: 1\nmixed_precision: bf16\n")
    args = ("check", str(yaml), "--system", "1xA10G", "--model", "llama-3.1-8b", "--seq-len", "1024",
            "--select", "AW501,AW505")
    assert cli(*args).exit_code == 1
    assert "AW501" in cli(*args, "--lora").stdout
    qlora = cli(*args, "--qlora")
    assert qlora.exit_code == 0 and "AW501" not in qlora.stdout
    both = cli(*args, "--lora", "--qlora")
    assert both.exit_code == 2 and "--lora, --qlora name two methods" in both.stderr


def test_inits_own_output_is_clean_and_a_breaking_edit_is_an_error(cli, tmp_path, monkeypatch):
    """The regressions of issue 10 through the real `init`: its files and plan check clean (no AW5xx for the
    checkpointing it assumed, no AW104 for a SLURM plan), a 2-node plan is 2 machines / 16 processes and
    `--nodes=2`, and micro-batch 1 -> 16 in its JSON is AW501 and AW114."""
    monkeypatch.chdir(tmp_path)
    one = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-8b", "--defaults")
    assert one.exit_code == 0, one.stderr
    plan_file = plan_path_for(tmp_path / "accelerate.yaml")
    assert plan_file.is_file()
    clean = cli("check", "accelerate.yaml", "--format", "json")
    assert clean.exit_code == 0 and not [d for d in json.loads(clean.stdout) if d["severity"] != "info"]
    json_name = yaml_safe_load(plan_file)["files"]["deepspeed"]
    data = json.loads((tmp_path / json_name).read_text())
    data["train_micro_batch_size_per_gpu"] = 16
    (tmp_path / json_name).write_text(json.dumps(data))
    broken = cli("check", "accelerate.yaml", "--format", "json")
    assert broken.exit_code == 1 and {"AW501", "AW114"} <= set(codes_of(broken))

    two = tmp_path / "two"
    two.mkdir()
    monkeypatch.chdir(two)
    made = cli("init", "--system", "2x8xH100", "--model", "llama-3.1-70b", "--strategy", "zero3", "--defaults")
    assert made.exit_code == 0, made.stderr
    written = (two / "accelerate.yaml").read_text()
    assert "num_machines: 2\n" in written and "num_processes: 16\n" in written
    checked = cli("check", "accelerate.yaml", "--format", "json")
    assert checked.exit_code == 0 and "AW104" not in codes_of(checked)
    assert cli("run", "--slurm", "job.sbatch").exit_code == 0
    assert "#SBATCH --nodes=2" in (two / "job.sbatch").read_text().splitlines()


def yaml_safe_load(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def test_each_unit_gets_its_own_plan_and_a_pair_is_checked_once(cli, wizard_like, tmp_path):
    """`check accelerate.yaml ds_config.json` with a plan: the pair is one unit (no finding twice); a second YAML
    beside its own plan is judged by that plan, not by the first one's."""
    yaml = wizard_like()
    def findings(*files: Path) -> list[tuple[str, str, int]]:
        return sorted((d["code"], d["message"], d["line"])
                      for d in json.loads(cli("check", *map(str, files), "--format", "json").stdout))

    assert findings(yaml, yaml.parent / "ds_config.json") == findings(yaml)
    other = tmp_path / "other" / "accelerate.yaml"
    other.parent.mkdir()
    other.write_text(DS_YAML.format(machines=1, processes=4).replace("ds_config.json", "../ds_config.json"))
    plan_path_for(other).write_text(dump_plan(plan(deepspeed="../ds_config.json").model_copy(
        update={"files": PlanFiles(accelerate="accelerate.yaml", deepspeed="../ds_config.json")})))
    both = cli("check", str(yaml), str(other), "--select", "AW114", "--format", "json")
    found = json.loads(both.stdout)
    assert [(Path(d["file"]).parent.name, d["message"]) for d in found] == [
        ("other", "num_processes 4 disagrees with accelerate.plan.yaml, which planned 1 machine(s) x 8 GPU(s) = 8")]
