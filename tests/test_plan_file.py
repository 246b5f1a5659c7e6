"""The plan file model: round trip, validation errors as one line, paths relative to the plan, and the system and
workload `check` builds from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.errors import InputError
from accelwiz.plan_file import (
    PlanFile,
    PlanFiles,
    PlanFineTuning,
    PlanLauncher,
    PlanModel,
    PlanSystem,
    PlanTraining,
    dump_plan,
    find_plan,
    load_plan,
    plan_path_for,
    plan_system,
)
from accelwiz.probe.presets import find_preset, preset_profile
from accelwiz.estimate.planned import plan_workload

GIB = 2**30


def a_plan(**changes) -> PlanFile:
    fields = {
        "files": PlanFiles(accelerate="accelerate.yaml", deepspeed="ds_config.json"),
        "system": PlanSystem(name="2x8xH100", machines=2, gpus_per_machine=8),
        "launcher": PlanLauncher(kind="slurm", rdzv_backend="c10d"),
        "model": PlanModel(name="llama-3.1-70b"),
        "fine_tuning": PlanFineTuning(method="lora", lora_rank=8, lora_alpha=16, lora_targets=["q_proj", "v_proj"]),
        "training": PlanTraining(micro_batch=2, gradient_accumulation=4, sequence_length=4096,
                                 gradient_checkpointing=True, precision="bf16"),
    }
    return PlanFile(**{**fields, **changes})


def test_round_trip_and_where_it_lives(tmp_path: Path):
    config = tmp_path / "accelerate.yaml"
    assert plan_path_for(config) == tmp_path / "accelerate.plan.yaml"
    assert find_plan(config) is None
    plan_path_for(config).write_text(dump_plan(a_plan()))
    assert find_plan(config) == tmp_path / "accelerate.plan.yaml"
    loaded = load_plan(find_plan(config))
    assert loaded.model_dump() == a_plan().model_dump() and loaded.path == tmp_path / "accelerate.plan.yaml"
    assert (loaded.world_size, loaded.global_batch) == (16, 2 * 4 * 16)
    assert loaded.launcher.supplies_rendezvous
    assert loaded.resolve("ds_config.json") == tmp_path / "ds_config.json"
    assert loaded.resolve("/abs/x.json") == Path("/abs/x.json")


def test_cpu_machines_count_one_process_each_unless_told():
    cpu = PlanSystem(name="cpu", machines=2, gpus_per_machine=0)
    assert cpu.world_size == 2
    assert PlanSystem(name="cpu", machines=2, gpus_per_machine=0, processes_per_machine=3).world_size == 6


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "the top level is a list, not a mapping"),
        ("schema_version: 99\n", "plan schema_version 99 is newer than this accelwiz reads (1)"),
        ("files: {accelerate: a.yaml}\nsystem: {name: x}\nmodel: {name: tiny}\n"
         "training: {micro_batch: 0, sequence_length: 8}\n", "invalid plan at `training.micro_batch`"),
        ("files: {accelerate: a.yaml}\nsystem: {name: x}\nmodel: {name: tiny}\nfine_tuning: {lora_rank: 8}\n"
         "training: {micro_batch: 1, sequence_length: 8}\n", "invalid plan at `fine_tuning`"),
    ],
)
def test_bad_plans_are_one_line_errors(tmp_path: Path, text: str, message: str):
    path = tmp_path / "a.plan.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_plan(path)
    assert message in raised.value.message and raised.value.hint


def test_system_from_a_preset_takes_the_plans_machine_count():
    system = plan_system(a_plan(system=PlanSystem(name="8xH100-80GB", machines=3, gpus_per_machine=8)))
    preset = preset_profile(find_preset("8xH100-80GB"))
    assert (system.num_machines, system.gpu_count, system.min_gpu_memory_bytes) == (3, 8, preset.min_gpu_memory_bytes)


def test_system_from_a_profile_file_relative_to_the_plan(tmp_path: Path):
    profile = preset_profile(find_preset("1xL4")).model_copy(update={"name": "my-box"})
    (tmp_path / "node.json").write_text(profile.model_dump_json())
    plan_path = tmp_path / "a.plan.yaml"
    plan_path.write_text(dump_plan(a_plan(system=PlanSystem(name="node.json", machines=1, gpus_per_machine=1))))
    system = plan_system(load_plan(plan_path))
    assert (system.name, system.gpus[0].name, system.num_machines) == ("my-box", "NVIDIA L4", 1)


def test_system_composed_from_what_the_plan_records():
    known = plan_system(a_plan(system=PlanSystem(name="local", machines=1, gpus_per_machine=4,
                                                 gpu="NVIDIA A100-SXM4-80GB", gpu_memory_bytes=80 * GIB,
                                                 host_memory_bytes=512 * GIB)))
    assert (known.gpu_count, known.min_gpu_memory_bytes, known.host.memory_total_bytes) == (4, 80 * GIB, 512 * GIB)
    assert known.gpus[0].compute_capability == (8, 0) and len(known.notes) == 1
    unknown = plan_system(a_plan(system=PlanSystem(name="local", gpus_per_machine=1, gpu="Mystery GPU",
                                                   gpu_memory_bytes=GIB)))
    assert "Mystery GPU" in unknown.notes[1] and unknown.gpus[0].compute_capability == (8, 0)
    unrecorded = plan_system(a_plan(system=PlanSystem(name="local", gpus_per_machine=2, gpu="NVIDIA L4")))
    assert unrecorded.gpu_count == 2 and not unrecorded.min_gpu_memory_bytes  # GPUs, but no memory to judge
    cpu = plan_system(a_plan(system=PlanSystem(name="local", machines=2, host_memory_bytes=8 * GIB)))
    assert (cpu.gpu_count, cpu.num_machines, cpu.host.memory_total_bytes) == (0, 2, 8 * GIB)


def test_workload_is_what_the_plan_assumed():
    workload, why_not = plan_workload(a_plan())
    assert why_not is None
    assert (workload.model.name, workload.micro_batch, workload.seq_len, workload.regime, workload.lora_rank,
            workload.lora_targets, workload.precision, workload.gradient_checkpointing) == (
        "llama-3.1-70b", 2, 4096, "lora", 8, ("q_proj", "v_proj"), "mixed", True)
    fp32, _ = plan_workload(a_plan(training=PlanTraining(micro_batch=1, sequence_length=8, precision="fp32")))
    assert fp32.precision == "fp32"


def test_workload_of_a_checkpoint_relative_to_the_plan_or_its_parameter_count(tmp_path: Path):
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 256}))
    plan_path = tmp_path / "a.plan.yaml"
    plan_path.write_text(dump_plan(a_plan(model=PlanModel(name="ckpt", source="checkpoint"),
                                          fine_tuning=PlanFineTuning())))
    workload, _ = plan_workload(load_plan(plan_path))
    assert workload.model.num_layers == 2
    hub = a_plan(model=PlanModel(name="someone/unknown-model", source="hub", parameters=7_000_000_000))
    workload, _ = plan_workload(hub)
    assert workload.model.num_parameters == 7_000_000_000
    nothing, why_not = plan_workload(a_plan(model=PlanModel(name="someone/unknown-model", source="hub")))
    assert nothing is None and "records no parameter count" in why_not
