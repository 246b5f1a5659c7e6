"""Effective values: precedence between the Accelerate YAML, the DeepSpeed JSON and library defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelwiz.document import parse_text
from accelwiz.effective import EffectiveValue, resolve
from accelwiz.effective_deepspeed import deepspeed_batch
from accelwiz.errors import InputError
from accelwiz.rules.engine import CheckResult, build_units
from accelwiz.rules.report import render_explanation
from tests.crosscheck.test_deepspeed_config import deepspeed_config  # noqa: F401, F811  (a fixture)

SOURCES = ("yaml", "json", "plan", "trainer", "accelerate default", "deepspeed default", "derived", "unset")
YAML_DS = "distributed_type: DEEPSPEED\nnum_processes: 8\nnum_machines: 2\nmachine_rank: 1\n"


def yaml(text: str):
    return parse_text(text, Path("accelerate.yaml"), kind="accelerate")


def ds(data: dict):
    return parse_text(json.dumps(data), Path("ds.json"), kind="deepspeed")


def pick(value: EffectiveValue) -> tuple:
    return value.value, value.source


def test_topology_from_the_yaml():
    effective = resolve(yaml(YAML_DS), None)
    assert pick(effective.num_processes) == (8, "yaml")
    assert pick(effective.processes_per_machine) == (4, "derived")
    assert pick(effective.machine_rank) == (1, "yaml")
    assert effective.num_processes.path == ("num_processes",)


def test_inline_deepspeed_defaults_are_accelerates():
    effective = resolve(yaml(YAML_DS), None)
    assert pick(effective.zero_stage) == (2, "accelerate default")
    assert pick(effective.offload_optimizer) == ("none", "accelerate default")
    assert pick(effective.gradient_accumulation) == (1, "accelerate default")
    assert pick(effective.gradient_clipping) == (1.0, "derived")  # absent -> "auto" -> 1.0 (#3807)
    assert pick(effective.mixed_precision) == ("no", "accelerate default")


def test_inline_deepspeed_values_from_the_yaml():
    effective = resolve(yaml(YAML_DS + "mixed_precision: bf16\ndeepspeed_config:\n  zero_stage: 3\n"
                                       "  gradient_accumulation_steps: 4\n  gradient_clipping: auto\n"
                                       "  offload_param_device: cpu\n"), None)
    assert pick(effective.zero_stage) == (3, "yaml")
    assert pick(effective.gradient_accumulation) == (4, "yaml")
    assert pick(effective.gradient_clipping) == (1.0, "derived")
    assert pick(effective.offload_param) == ("cpu", "yaml")
    assert pick(effective.mixed_precision) == ("bf16", "yaml")


def test_the_json_owns_deepspeed_settings_under_accelerate():
    effective = resolve(yaml(YAML_DS), ds({
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto", "bf16": {"enabled": True},
        "zero_optimization": {"stage": "auto", "offload_optimizer": {"device": "cpu"}}}))
    assert pick(effective.zero_stage) == (2, "derived")  # accelerate fills "auto" with 2
    assert pick(effective.offload_optimizer) == ("cpu", "json")
    assert pick(effective.offload_param) == ("none", "deepspeed default")
    assert pick(effective.gradient_accumulation) == (1, "derived")
    assert pick(effective.gradient_clipping) == (1.0, "derived")
    assert pick(effective.mixed_precision) == ("bf16", "json")
    assert pick(effective.micro_batch) == (2, "json")
    assert pick(effective.global_batch) == (16, "derived")  # 2 x 1 x 8


def test_a_json_alone_follows_plain_deepspeed():
    effective = resolve(None, ds({"train_batch_size": 32, "zero_optimization": {"stage": "auto"},
                                  "fp16": {"enabled": "auto"}}))
    assert pick(effective.zero_stage) == (0, "deepspeed default")  # plain DeepSpeed drops "auto"
    assert pick(effective.mixed_precision) == (None, "unset")
    assert pick(effective.gradient_clipping) == (1.0, "deepspeed default")
    assert pick(effective.global_batch) == (32, "json")
    assert effective.json_alone and effective.uses_deepspeed


def test_a_json_without_gradient_accumulation_gets_one_from_accelerate():
    effective = resolve(yaml(YAML_DS), ds({"train_batch_size": 24, "train_micro_batch_size_per_gpu": 3,
                                           "zero_optimization": {"stage": 1}}))
    assert pick(effective.gradient_accumulation) == (1, "accelerate default")
    assert pick(effective.global_batch) == (24, "json")


def test_micro_batch_is_derived_the_way_deepspeed_derives_it():
    effective = resolve(yaml(YAML_DS), ds({"train_batch_size": 64, "gradient_accumulation_steps": 2,
                                           "zero_optimization": {"stage": 1}}))
    assert pick(effective.micro_batch) == (4, "derived")  # 64 // 8 // 2


def test_legacy_keys_are_understood():
    effective = resolve(None, ds({"zero_optimization": {"stage": 2, "cpu_offload": True},
                                  "bfloat16": {"enabled": True}}))
    assert pick(effective.offload_optimizer) == ("cpu", "json")
    assert pick(effective.mixed_precision) == ("bf16", "json")


def test_wrong_types_resolve_to_unset():
    effective = resolve(yaml("distributed_type: DEEPSPEED\nnum_processes: '8'\n"),
                        ds({"zero_optimization": {"stage": "2"}, "gradient_accumulation_steps": "8"}))
    assert pick(effective.num_processes) == (None, "unset")
    assert pick(effective.zero_stage) == (None, "unset")
    assert pick(effective.gradient_accumulation) == (None, "unset")


def test_fsdp_version():
    assert pick(resolve(yaml("distributed_type: FSDP\n"), None).fsdp_version) == (1, "accelerate default")
    fsdp2 = resolve(yaml("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n"), None)
    assert pick(fsdp2.fsdp_version) == (2, "yaml")
    assert pick(resolve(yaml("distributed_type: MULTI_GPU\n"), None).fsdp_version) == (None, "unset")


@pytest.mark.parametrize("tbs,mbs,gas,world,expected", [
    (60, 2, 3, 8, "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
                  "gradient_acc_step * world_size 60 != 2 * 3 * 8"),
    (4, None, None, 8, "Micro batch size per gpu: 0 has to be greater than 0"),
    (None, 2, 0, 1, "Train batch size: 0 has to be greater than 0"),
    (None, None, 4, 1, "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"),
    (128, 2, 8, 8, (128, 2, 8)),
    (5e2, 2.0, None, 25, (500, 2, 10)),
    ("auto", 4, 2, 8, (64, 4, 2)),
])
def test_deepspeed_batch_matches_deepspeed(tbs, mbs, gas, world, expected):
    assert deepspeed_batch(tbs, mbs, gas, world) == expected


def test_deepspeed_batch_agrees_with_deepspeed_itself(deepspeed_config):  # noqa: F811
    for tbs, mbs, gas, world in [(60, 2, 3, 8), (4, None, None, 8), (128, 2, 8, 8), (24, 3, None, 4),
                                 (None, 3, 2, 2), (30, None, 2, 3), (7, 2, None, 2)]:
        ours = deepspeed_batch(tbs, mbs, gas, world)
        written = {"train_batch_size": tbs, "train_micro_batch_size_per_gpu": mbs,
                   "gradient_accumulation_steps": gas}
        theirs = deepspeed_config({k: v for k, v in written.items() if v is not None}, world)
        if isinstance(ours, str):
            assert isinstance(theirs, str) and ours in theirs
        else:
            assert ours == (theirs.train_batch_size, theirs.train_micro_batch_size_per_gpu,
                            theirs.gradient_accumulation_steps)


scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=5))
values = st.recursive(scalars
                      | st.sampled_from(["auto", "cpu", "nvme", "fp16", "bf16", "DEEPSPEED", "FSDP"]),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                          ["stage", "enabled", "device", "offload_param", "offload_optimizer", "fsdp_version",
                           "zero_stage", "gradient_accumulation_steps"]), inner, max_size=4), max_leaves=10)
keys = st.sampled_from(["distributed_type", "num_processes", "num_machines", "machine_rank",
                        "mixed_precision", "deepspeed_config", "fsdp_config", "zero_optimization", "fp16",
                        "bf16", "bfloat16",
                        "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                        "gradient_clipping"])


configs = st.dictionaries(keys, values, min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(configs, configs)
def test_resolve_never_raises(yaml_data, json_data):
    try:
        accelerate = parse_text(json.dumps(yaml_data), Path("a.yaml"), kind="accelerate")
        deepspeed = parse_text(json.dumps(json_data), Path("ds.json"), kind="deepspeed")
    except InputError:  # not a config at all: the loader refuses it before any rule or resolve runs
        return
    for pair in ((accelerate, deepspeed), (accelerate, None), (None, deepspeed)):
        effective = resolve(*pair)
        for _, item in effective.items():
            assert item.source in SOURCES


def test_explanation_is_an_aligned_table(write):
    json_path = write("ds.json", json.dumps({"train_micro_batch_size_per_gpu": 2, "zero_optimization":
                                             {"stage": 3}, "gradient_clipping": "auto"}))
    yaml_path = write("a.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: {json_path}\n")
    [unit] = build_units([yaml_path], CheckResult())
    text = render_explanation(unit)
    lines = text.splitlines()
    assert lines[0] == f"Effective values for {yaml_path} + {json_path}:"
    header = lines[1]
    assert header.split() == ["setting", "value", "source", "written", "at", "/", "why"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert rows["zero_stage"].split()[1:4] == ["3", "json", "ds.json:1"]
    assert "gradient_clipping" in rows and '"auto" -> 1.0' in rows["gradient_clipping"]
    assert rows["global_batch"].split()[1:3] == ["16", "derived"]
    value_column = header.index("value")
    assert all(line[value_column - 2:value_column] == "  " for line in lines[2:])


def test_explain_through_the_cli(cli, write):
    path = write("ds.json", json.dumps({"train_batch_size": 8, "zero_optimization": {"stage": 2}}))
    result = cli("check", "--explain", str(path))
    assert "zero_stage" in result.stdout and "deepspeed default" in result.stdout


def test_settings_of_a_missing_json_are_not_taken_from_the_yaml():
    effective = resolve(yaml(YAML_DS + "deepspeed_config:\n  deepspeed_config_file: nowhere.json\n"
                                       "  zero_stage: 3\n"), None)
    assert pick(effective.zero_stage) == (None, "unset")
    assert "not found" in effective.zero_stage.note


@pytest.mark.parametrize("flag", ["true", "yes", "True"])
def test_a_string_flag_deepspeed_reads_as_true_sets_the_precision(flag):
    # DeepSpeed's lax pydantic bool turns these into True; the precision rules read them so too
    effective = resolve(yaml(YAML_DS), ds({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": flag},
                                           "zero_optimization": {"stage": 2}}))
    assert pick(effective.mixed_precision) == ("bf16", "json")


def test_an_absent_process_count_is_what_accelerate_loads():
    # ClusterConfig: 1 for distributed_type "NO", else -1, which `accelerate launch` refuses without a flag
    assert pick(resolve(yaml("distributed_type: 'NO'\n"), None).num_processes) == (1, "accelerate default")
    refused = resolve(yaml("distributed_type: MULTI_GPU\n"), None).num_processes
    assert pick(refused) == (None, "accelerate default")
    assert "--num_processes" in refused.note and "visible" not in refused.note
    # an unquoted NO is the boolean false, which process_config does not compare equal to "NO"
    assert pick(resolve(yaml("distributed_type: NO\n"), None).num_processes) == (None, "accelerate default")


# --- coercion: the one reading of ints, flags and devices (accelwiz/coerce.py) ---

@pytest.mark.parametrize("written,expected", [
    (8, 8), (5e8, 500_000_000), (2.0, 2), (2.5, None), (True, None), (False, None), ("8", None),
    (float("inf"), None), (None, None), ("auto", None)])
def test_integer_reads_integral_floats_and_never_bools_or_strings(written, expected):
    from accelwiz import coerce

    assert coerce.integer(written) == expected


def test_flag_words_are_accelerates_str_to_bool():
    from accelerate.utils.environment import str_to_bool

    from accelwiz import coerce

    for word in sorted(coerce.TRUE_WORDS | coerce.FALSE_WORDS):
        for spelling in (word, word.upper()):
            assert coerce.flag(spelling) is bool(str_to_bool(spelling.lower()))
    assert coerce.flag("maybe") is None and coerce.flag(2) is None and coerce.flag(None) is None
    assert coerce.flag(True) is True and coerce.flag(0) is False


def test_flag_words_are_what_deepspeeds_pydantic_accepts(deepspeed_config):  # noqa: F811
    from deepspeed.runtime.config_utils import DeepSpeedConfigModel

    from accelwiz import coerce

    class Flag(DeepSpeedConfigModel):
        value: bool = False

    for written in [*sorted(coerce.TRUE_WORDS | coerce.FALSE_WORDS), "TRUE", "Off", 1, 0, 1.0, 0.0]:
        assert Flag(value=written).value is coerce.flag(written)
    for refused in (" yes", "yes ", 2, 0.5, "maybe", None):
        assert coerce.flag(refused) is None
        with pytest.raises(ValueError):
            Flag(value=refused)


def test_device_and_choice_follow_the_launcher_case():
    from accelwiz import coerce

    assert [coerce.device(v) for v in ("cpu", "nvme", "none", "CPU", "None", None)] == \
        ["cpu", "nvme", "none", None, None, None]
    assert coerce.choice("BF16", ("no", "fp16", "bf16", "fp8"), case="lower") == "bf16"
    assert coerce.choice("shard_grad_op", ("FULL_SHARD", "SHARD_GRAD_OP"), case="upper") == "SHARD_GRAD_OP"
    assert coerce.choice("multi_gpu", ("MULTI_GPU",)) is None  # DistributedType(value) is exact


def test_vocabulary_matches_the_schemas_distributed_types():
    from typing import get_args

    from accelwiz.config.accelerate import DistributedType
    from accelwiz.vocab import MULTI_DEVICE_TYPES, PER_DEVICE_TYPES

    known = set(get_args(DistributedType))
    assert {t for t in known if t.startswith("MULTI_") and t != "MULTI_CPU"} == MULTI_DEVICE_TYPES
    assert known >= PER_DEVICE_TYPES


def test_atomic_write_replaces_whole_files_and_keeps_the_mode(tmp_path):
    import os

    from accelwiz.atomic import atomic_write

    target = tmp_path / "sub" / "a.yaml"
    atomic_write(target, "one\n")
    os.chmod(target, 0o640)
    atomic_write(target, "two\n")
    assert target.read_text() == "two\n" and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.yaml"]
    from accelwiz.errors import WriteError

    with pytest.raises(WriteError, match="does not exist"):
        atomic_write(tmp_path / "missing" / "b.yaml", "x", create_parents=False)


# --- the plan file, the third input ---

def a_plan(**training):
    from accelwiz.plan_file import PlanFile, PlanFiles, PlanFineTuning, PlanModel, PlanSystem, PlanTraining

    return PlanFile(files=PlanFiles(accelerate="accelerate.yaml"), system=PlanSystem(name="8xH100-80GB",
                    gpus_per_machine=8), model=PlanModel(name="gpt2"), fine_tuning=PlanFineTuning(method="lora"),
                    training=PlanTraining(**{"micro_batch": 4, "gradient_accumulation": 2, "sequence_length": 1024,
                                             "gradient_checkpointing": True, "attention": "flash", **training}))


def test_what_only_the_plan_knows_has_source_plan():
    effective = resolve(yaml("distributed_type: MULTI_GPU\nnum_processes: 8\n"), None, a_plan())
    assert pick(effective.sequence_length) == (1024, "plan")
    assert pick(effective.gradient_checkpointing) == (True, "plan")
    assert pick(effective.attention) == ("flash", "plan")
    assert pick(effective.fine_tuning_method) == ("lora", "plan")
    # no file owns the batch without DeepSpeed: the DataLoader's batch size and Accelerator's accumulation
    assert pick(effective.micro_batch) == (4, "plan") and pick(effective.gradient_accumulation) == (2, "plan")
    assert pick(effective.global_batch) == (64, "derived")  # 4 x 2 x 8 processes


def test_a_file_that_owns_the_batch_wins_over_the_plan():
    effective = resolve(yaml(YAML_DS), ds({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3,
                                           "zero_optimization": {"stage": 2}}), a_plan())
    assert pick(effective.micro_batch) == (2, "json") and pick(effective.gradient_accumulation) == (3, "json")
    assert pick(effective.global_batch) == (48, "derived")  # DeepSpeed's identity: 2 x 3 x 8
    inline = resolve(yaml(YAML_DS + "deepspeed_config:\n  gradient_accumulation_steps: 5\n"), None, a_plan())
    assert pick(inline.gradient_accumulation) == (5, "yaml") and pick(inline.micro_batch) == (4, "plan")


def test_resolve_without_a_plan_leaves_plan_values_unset():
    effective = resolve(yaml("distributed_type: MULTI_GPU\nnum_processes: 8\n"), None)
    assert pick(effective.sequence_length) == (None, "unset") and pick(effective.micro_batch) == (None, "unset")


def test_written_and_invalid_record_what_the_schema_rules_report():
    effective = resolve(yaml("distributed_type: FSDP\nnum_processes: 8.0\nuse_cpu: 'yes'\nfsdp_config:\n"
                             "  fsdp_version: '2'\n  fsdp_reshard_after_forward: 'false'\n"), None)
    assert effective.num_processes.value == 8 and effective.num_processes.invalid  # the integral-float leniency
    assert effective.use_cpu.value is True and effective.use_cpu.strict is None and effective.use_cpu.written == "yes"
    assert effective.fsdp_version.value == 2 and effective.fsdp_version.strict is None  # int("2") in the plugin
    assert pick(effective.fsdp_sharding) == ("SHARD_GRAD_OP", "yaml")  # str_to_bool('false')
    clean = resolve(yaml("distributed_type: MULTI_GPU\nnum_processes: 8\n"), None)
    assert not clean.num_processes.invalid and clean.num_processes.is_written and not clean.use_cpu.is_written
