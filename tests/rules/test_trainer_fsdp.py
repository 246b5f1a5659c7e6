"""FSDP through the Trainer's --fsdp/--fsdp_config: AW715/AW716, and the FSDP rules that now see the Trainer's
plugin through ctx.effective (AW710 activation checkpointing twice, AW316 the wrap class, AW711 the state dict).
tests/crosscheck/test_trainer_fsdp_plugin.py compares the values with the real TrainingArguments and plugin."""

from __future__ import annotations

import json

import pytest

from accelwiz.config.training_args import parse_argv, parse_file
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.workload import Workload
from accelwiz.rules.engine import check_paths
from tests.rules.helpers import codes, diagnostics

DDP = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
ONE = "distributed_type: 'NO'\nnum_processes: 1\n"
ZERO2 = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"
FSDP1 = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n"
         "  fsdp_state_dict_type: SHARDED_STATE_DICT\n")


def found(write, yaml: str, argv: list[str], **context) -> set[str]:
    return codes(write("accelerate.yaml", yaml), select=("AW7", "AW3"), training_args=parse_argv(argv), **context)


@pytest.mark.parametrize("yaml,bad,good", [
    (DDP, ["--fsdp", "hybrid_shard"], ["--fsdp", "full_shard"]),
    (DDP, ["--fsdp", "full_shard autowrap"], ["--fsdp", "full_shard auto_wrap"]),
    (DDP, ["--fsdp", "--fsdp_config", '{"auto_wrap_policy": "size_based_wrap"}'],
     ["--fsdp", "--fsdp_config", '{"auto_wrap_policy": "SIZE_BASED_WRAP"}']),
    (DDP, ["--fsdp", "--fsdp_config", "missing.json"], ["--fsdp"]),
    (DDP, ["--fsdp", "--fsdp_config", "/dev/zero"], ["--fsdp"]),  # the bounded reader: refused, never read
    (ZERO2, ["--fsdp"], []),
    (DDP, ["--fsdp", "--deepspeed", '{"zero_optimization": {"stage": 2}}'], ["--fsdp"]),
    (ONE, ["--fsdp"], []),
])
def test_aw714_fires_where_the_trainer_stops_and_not_where_it_runs(write, yaml, bad, good):
    assert "AW715" in found(write, yaml, bad)
    assert "AW715" not in found(write, yaml, good)


def test_aw715_lists_the_yaml_settings_the_trainer_replaces(write):
    [diagnostic] = diagnostics(write("a.yaml", FSDP1), select=("AW716",),
                               training_args=parse_argv(["--fsdp", "full_shard auto_wrap"]))
    assert "fsdp_version 1 -> 2" in diagnostic.message and "SHARDED_STATE_DICT -> FULL_STATE_DICT" in diagnostic.message
    same = ["--fsdp", "--fsdp_config", '{"version": 1, "state_dict_type": "SHARDED_STATE_DICT"}']
    assert "AW716" not in found(write, FSDP1, same)
    assert "AW716" not in found(write, FSDP1, [])  # no --fsdp: the YAML alone configures FSDP


def test_aw715_fsdp1_ignores_the_trainers_strategy(write):
    fsdp1 = ["--fsdp_config", '{"version": 1}']
    assert "AW716" in found(write, DDP, ["--fsdp", "shard_grad_op", *fsdp1])
    assert "AW716" not in found(write, DDP, ["--fsdp", "full_shard", *fsdp1])
    # the launcher exports an FSDP2 YAML's fsdp_sharding_strategy too, and FSDP1 takes it over the Trainer's
    fsdp2 = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    yaml = fsdp2 + "  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
    assert "AW716" in found(write, yaml, ["--fsdp", "full_shard", *fsdp1])


def test_the_trainers_fsdp_reaches_the_effective_values(write):
    result = check_paths([write("a.yaml", DDP)], training_args=parse_argv(["--fsdp", "shard_grad_op offload"]))
    effective = result.units[0].effective
    assert effective.is_fsdp and effective.distributed_type.source == "trainer"
    assert (effective.fsdp_version.value, effective.fsdp_sharding.value) == (2, "SHARD_GRAD_OP")
    assert effective.fsdp_offload_params.value is True
    from accelwiz.estimate.configured_strategy import strategy_from_effective

    strategy = strategy_from_effective(effective)  # the memory estimate's: FSDP with parameter offload, not DDP
    assert (strategy.kind, strategy.offload_param) == ("fsdp_grad_op", "cpu")


@pytest.mark.parametrize("yaml", [ZERO2, ONE])
def test_refused_runs_keep_the_launchers_values(write, yaml):
    effective = check_paths([write("a.yaml", yaml)], training_args=parse_argv(["--fsdp"])).units[0].effective
    assert not effective.is_fsdp


def test_aw710_sees_fsdp_activation_checkpointing_in_the_trainers_config(write):
    config = ["--fsdp", "--fsdp_config", '{"activation_checkpointing": true}']
    assert "AW710" in found(write, DDP, [*config, "--gradient_checkpointing"])
    assert "AW710" not in found(write, DDP, config)


def test_aw316_judges_the_trainers_wrap_class(write, tmp_path):
    config = tmp_path / "fsdp.json"
    config.write_text(json.dumps({"fsdp_transformer_layer_cls_to_wrap": ["BertLayer"]}))
    args = tmp_path / "args.yaml"
    args.write_text(f"fsdp: full_shard auto_wrap\nfsdp_config: {config}\n")
    workload = Workload(resolve_model("llama-3.2-1b"))
    yaml = write("a.yaml", DDP)
    [diagnostic] = diagnostics(yaml, select=("AW316",), training_args=parse_file(args), workload=workload)
    assert "BertLayer" in diagnostic.message and "LlamaDecoderLayer" in diagnostic.message
    config.write_text(json.dumps({"transformer_layer_cls_to_wrap": "LlamaDecoderLayer"}))
    assert not diagnostics(yaml, select=("AW316",), training_args=parse_file(args), workload=workload)


def test_aw711_sees_the_trainers_full_state_dict(write):
    """The Trainer passes state_dict_type FULL_STATE_DICT: --save_only_model is accepted with its FSDP2."""
    yaml = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    assert "AW711" in found(write, yaml, ["--save_only_model"])
    assert "AW711" not in found(write, yaml, ["--save_only_model", "--fsdp"])
    sharded = ["--save_only_model", "--fsdp", "--fsdp_config", '{"state_dict_type": "SHARDED_STATE_DICT"}']
    assert "AW711" in found(write, DDP, sharded)


def test_aw716_fsdp_config_without_fsdp_is_never_read(write, tmp_path):
    assert "AW717" in found(write, DDP, ["--fsdp_config", '{"cpu_offload": true}'])
    assert "AW717" in found(write, FSDP1, ["--fsdp_config", str(tmp_path / "missing.json")])  # never opened
    assert "AW717" not in found(write, DDP, ["--fsdp", "--fsdp_config", '{"cpu_offload": true}'])
    assert "AW717" not in found(write, DDP, [])
