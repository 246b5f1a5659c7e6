"""`load_system`: presets, saved profiles, `local`; `save_profile` round trips and writes atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.errors import InputError, UsageError
from accelwiz.probe.gpus import GPU_MODELS, match_gpu_name
from accelwiz.probe.model import MachineProfile
from accelwiz.probe.presets import PRESETS
from accelwiz.probe.profiles import load_system, save_profile

SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"
GIB = 1024**3


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_every_preset_builds_a_consistent_profile(preset):
    profile = load_system(preset.name.upper())
    assert profile.source == "preset" and profile.name == preset.name
    assert profile.gpu_count == preset.gpus_per_node and profile.num_machines == preset.num_machines
    assert len(profile.topology.p2p) == profile.gpu_count
    assert profile.host.cpu_logical_cores == preset.vcpus
    assert profile.packages == {}  # unknown, so version rules stay silent for presets
    MachineProfile.model_validate_json(profile.model_dump_json())  # survives a JSON round trip


@pytest.mark.parametrize("name,gpus,memory_gib,bf16,fp8,topology,machines", [
    ("1xRTX4090", 1, 23.99, True, True, "single GPU", 1),
    ("1xA10G", 1, 22.49, True, False, "single GPU", 1),
    ("1xL4", 1, 22.49, True, True, "single GPU", 1),
    ("1xT4", 1, 15.0, False, False, "single GPU", 1),
    ("2xV100-16GB", 2, 15.78, False, False, "PCIe only", 1),
    ("8xV100-32GB", 8, 31.75, False, False, "NVLink partial", 1),
    ("4xA100-40GB", 4, 40.0, True, False, "NVLink all-to-all", 1),
    ("8xA100-80GB", 8, 80.0, True, False, "NVLink all-to-all", 1),
    ("8xH100-80GB", 8, 79.65, True, True, "NVLink all-to-all", 1),
    ("8xH200", 8, 140.4, True, True, "NVLink all-to-all", 1),
    ("2x8xH100", 8, 79.65, True, True, "NVLink all-to-all", 2),
])
def test_preset_facts(name, gpus, memory_gib, bf16, fp8, topology, machines):
    profile = load_system(name)
    assert profile.gpu_count == gpus
    assert profile.min_gpu_memory_bytes / GIB == pytest.approx(memory_gib, abs=0.01)
    assert (profile.native_bf16, profile.fp8, profile.topology.summary) == (bf16, fp8, topology)
    assert profile.num_machines == machines


def test_gpu_table_names_match_their_own_patterns():
    for model in GPU_MODELS:
        assert match_gpu_name(model.name) is model, model.key
    assert match_gpu_name("NVIDIA A100-SXM4-80GB").key == "A100-80GB"
    assert match_gpu_name("NVIDIA A10G").key == "A10G"
    assert match_gpu_name("Radeon RX 7900") is None


def test_unknown_preset_is_a_usage_error_with_close_names():
    with pytest.raises(UsageError) as caught:
        load_system("8xH100-80G")  # "8xH100" now composes 8 x H100-80GB (NxGPU specs, issue 11)
    assert "`8xH100-80GB`" in caught.value.hint and "--list-presets" in caught.value.hint


@pytest.mark.parametrize("fixture,gpus,machines", [
    ("cpu_only.json", 0, 1), ("1x4090.json", 1, 1), ("8xV100-32GB.json", 8, 1), ("8xH100-80GB.json", 8, 1),
    ("2x8xH100.json", 8, 2), ("mixed_4090_3090.json", 2, 1),
])
def test_fixture_profiles_load_as_files(fixture, gpus, machines):
    profile = load_system(str(SYSTEMS / fixture))
    assert profile.source == "file"
    assert (profile.gpu_count, profile.num_machines) == (gpus, machines)
    assert "torch" in profile.packages


def test_missing_profile_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_system(str(tmp_path / "node.json"))


def test_malformed_json_is_an_input_error_with_the_position(tmp_path):
    path = tmp_path / "node.json"
    path.write_text('{"host": {,}}')
    with pytest.raises(InputError, match=r"node.json:1:\d+: not valid JSON"):
        load_system(str(path))


def test_invalid_profile_names_the_first_problem_on_one_line(tmp_path):
    data = json.loads((SYSTEMS / "1x4090.json").read_text())
    data["gpus"][0]["compute_capability"] = "eight"
    data["num_machines"] = 0
    path = tmp_path / "node.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        load_system(str(path))
    message = caught.value.message
    assert "not a machine profile" in message and "\n" not in message and "1 more" in message


def test_save_then_load_round_trips_and_leaves_no_temporary_file(tmp_path):
    profile = load_system("8xH100-80GB")
    target = tmp_path / "node.json"
    save_profile(profile, target)
    save_profile(profile, target)  # overwriting works too
    assert [p.name for p in tmp_path.iterdir()] == ["node.json"]
    loaded = load_system(str(target))
    assert loaded.model_copy(update={"source": "preset"}) == profile


def test_save_into_a_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        save_profile(load_system("1xT4"), tmp_path / "no" / "node.json")


def test_local_probe_on_this_machine(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    profile = load_system("local")
    assert profile.source == "probe"
    assert profile.host.memory_total_bytes > 0 and profile.host.disk is not None
    assert profile.packages["nvidia-ml-py"] is not None
    if not profile.gpus:  # this CPU-only machine (CI); a GPU machine lists its GPUs instead
        assert profile.notes and profile.topology.summary in ("none", "unknown")


@pytest.mark.parametrize("extra", [{}, {"interconnect": {"ib": True}}])
def test_a_profile_from_a_newer_accelwiz_is_refused_naming_the_version(tmp_path, extra):
    data = {**json.loads((SYSTEMS / "1x4090.json").read_text()), "schema_version": 2, **extra}
    path = tmp_path / "node.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="schema_version 2") as caught:
        load_system(str(path))
    assert "upgrade accelwiz" in caught.value.hint
