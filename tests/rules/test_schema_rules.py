"""AW0xx: each schema rule fires on a config that has the mistake and stays quiet on a close one without it."""

from __future__ import annotations

import pytest

from tests.rules.helpers import codes, diagnostics

SCHEMA = ("AW0",)


@pytest.mark.parametrize("code,bad,good", [
    ("AW001", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stgae: 3\n",
     "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"),
    ("AW002", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  train_micro_batch_size_per_gpu: 4\n",
     "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n"),
    ("AW003", "distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: [true]\n",
     "distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: true\n"),
    ("AW004", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_optimizer_device: gpu\n",
     "distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_optimizer_device: cpu\n"),
    ("AW005", "distributed_type: MULTI_GPU\nnum_processes: '2'\n", "distributed_type: MULTI_GPU\nnum_processes: 2\n"),
    ("AW006", "distributed_type: FSDP\nfsdp_config:\n  fsdp_auto_wrap_policy: SIZE_BASED_WRAP\n"
              "  fsdp_min_num_params: 1e8\n",
     "distributed_type: FSDP\nfsdp_config:\n  fsdp_auto_wrap_policy: SIZE_BASED_WRAP\n"
     "  fsdp_min_num_params: 100000000\n"),
    ("AW007", "distributed_type: NO\n", "distributed_type: 'NO'\n"),
    ("AW008", "distributed_type: 'NO'\nmixed_precision: no\n", "distributed_type: 'NO'\nmixed_precision: 'no'\n"),
    ("AW009", "distributed_type: 'NO'\nfp16: true\n", "distributed_type: 'NO'\nmixed_precision: fp16\n"),
    ("AW010", "distributed_type: 'NO'\nipex_config:\n  ipex: true\n", "distributed_type: 'NO'\n"),
    ("AW011", "num_processes: 1\n", "distributed_type: 'NO'\nnum_processes: 1\n"),
    ("AW012", "distributed_type: 'NO'\ndebug: true\ndebug: false\n", "distributed_type: 'NO'\ndebug: false\n"),
])
def test_accelerate_yaml(write, code, bad, good):
    assert code in codes(write("bad.yaml", bad), select=SCHEMA)
    assert code not in codes(write("good.yaml", good), select=SCHEMA)


@pytest.mark.parametrize("code,bad,good", [
    ("AW001", '{"zero_optimization": {"stage": 2, "overlap_comms": true}}',
     '{"zero_optimization": {"stage": 2, "overlap_comm": true}}'),
    ("AW002", '{"zero_optimization": {"stage": 3}, "stage3_max_live_parameters": 1e9}',
     '{"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9}}'),
    ("AW004", '{"zero_optimization": {"stage": 4}}', '{"zero_optimization": {"stage": 3}}'),
    ("AW005", '{"gradient_accumulation_steps": "8", "zero_optimization": {"stage": 1}}',
     '{"gradient_accumulation_steps": 8, "zero_optimization": {"stage": 1}}'),
    ("AW009", '{"zero_optimization": {"stage": 2, "cpu_offload": true}}',
     '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'),
    ("AW010", '{"zero_optimization": {"stage": 1}, "amp": {"enabled": true}}',
     '{"zero_optimization": {"stage": 1}, "fp16": {"enabled": true}}'),
    ("AW013", '{"train_micro_batch_size_per_gpu": 4, "train_micro_batch_size_per_gpu": 8}',
     '{"train_micro_batch_size_per_gpu": 4}'),
])
def test_deepspeed_json(write, code, bad, good):
    assert code in codes(write("bad.json", bad), select=SCHEMA)
    assert code not in codes(write("good.json", good), select=SCHEMA)


def test_unknown_key_suggests_the_closest_key_and_points_at_it(write):
    path = write("a.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stgae: 3\n")
    [found] = [d for d in diagnostics(path, select=SCHEMA) if d.code == "AW001"]
    assert (found.line, found.column) == (3, 3)
    assert "did you mean `zero_stage`" in found.message
    assert found.fix == "rename it to `zero_stage`"


def test_key_with_stray_whitespace(write):
    path = write("ds.json", '{"gradient_accumulation_steps ": 2, "zero_optimization": {"stage": 1}}')
    [found] = [d for d in diagnostics(path, select=SCHEMA) if d.code == "AW001"]
    assert "stray whitespace" in found.message


def test_integral_floats_are_fine_for_deepspeed_integers(write):
    path = write("ds.json", '{"zero_optimization": {"stage": 2, "reduce_bucket_size": 5e8}}')
    assert not codes(path, select=SCHEMA)


def test_case_mistake_in_an_enum_value_gets_a_case_hint(write):
    [found] = [d for d in diagnostics(write("a.yaml", "distributed_type: multi_gpu\n"), select=SCHEMA)
               if d.code == "AW004"]
    assert "case-sensitive" in (found.fix or "")


def test_a_renamed_value_names_its_new_spelling(write):
    [found] = [d for d in diagnostics(write("a.yaml", "distributed_type: TPU\n"), select=SCHEMA) if d.code == "AW004"]
    assert found.fix == "TPU was renamed XLA in accelerate 0.28: write `distributed_type: XLA`"


@pytest.mark.parametrize("spelling", ["NONE", "None", "CPU"])
def test_an_offload_device_in_any_case_is_what_the_launcher_passes(write, spelling):
    """The DeepSpeed launcher lower-cases the YAML's offload devices (utils/launch.py prepare_deepspeed_cmd_env),
    and `accelerate config` once wrote NONE: no schema error; CPU still counts as CPU offload (AW206 at ZeRO-2)."""
    yaml = write("a.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"
                           f"  offload_optimizer_device: {spelling}\n  offload_param_device: {spelling}\n")
    found = codes(yaml)
    assert "AW004" not in found
    assert ("AW206" in found) == (spelling == "CPU")


def test_a_deepspeed_json_offload_device_stays_case_sensitive(write):
    """DeepSpeed's OffloadDeviceEnum refuses "CPU" in its own JSON: nothing lower-cases it on the way."""
    path = write("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, '
                            '"offload_optimizer": {"device": "CPU"}}}')
    assert "AW004" in codes(path, select=SCHEMA)
