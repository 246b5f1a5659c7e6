"""Strategies: labels, ranking, CLI options, and reading them out of real config files."""

from __future__ import annotations

import pytest

from accelwiz.document import load_document
from accelwiz.effective import EffectiveConfig
from accelwiz.errors import UsageError
from accelwiz.estimate.configured_strategy import strategy_from_effective, training_precision
from accelwiz.estimate.strategy import Strategy, candidate_strategies, strategy_from_options
from accelwiz.rules.context import CheckContext


def test_labels():
    assert (
        Strategy("zero3", "cpu", "cpu", gpus_per_node=8).label == "ZeRO-3 + CPU offload (optimizer, params)"
    )
    assert Strategy("zero2", "cpu").label == "ZeRO-2 + CPU offload (optimizer)"
    assert Strategy("fsdp_full", fsdp_version=1).label == "FSDP1 full shard"
    assert Strategy("ddp", gpus_per_node=4, nodes=2).world_size == 8


def test_candidates_are_fastest_first():
    kinds = [(s.kind, s.offload_optimizer, s.offload_param) for s in candidate_strategies(8, 2)]
    assert kinds[:3] == [("ddp", "none", "none"), ("zero1", "none", "none"), ("zero2", "none", "none")]
    assert (
        kinds.index(("zero3", "none", "none"))
        < kinds.index(("fsdp_hybrid", "none", "none"))
        < kinds.index(("zero2", "cpu", "none"))
        < kinds.index(("zero3", "cpu", "cpu"))
        < kinds.index(("zero3", "nvme", "nvme"))
    )
    assert candidate_strategies(1)[0].kind == "single"
    assert all(s.kind != "fsdp_hybrid" for s in candidate_strategies(8, 1))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("zero4",), "unknown strategy"),
        (("ddp",), "offload needs ZeRO or FSDP"),
        (("zero2",), "parameter offload needs ZeRO-3"),
        (("zero1",), "NVMe optimizer offload needs ZeRO-3"),
        (("fsdp",), "FSDP cannot offload to NVMe"),
    ],
)
def test_option_errors(args, message):
    offload = {
        "ddp": {"offload_optimizer": "cpu"},
        "zero2": {"offload_param": "cpu"},
        "zero1": {"offload_optimizer": "nvme"},
        "fsdp": {"offload_param": "nvme"},
    }.get(args[0], {})
    with pytest.raises(UsageError, match=message):
        strategy_from_options(*args, gpus_per_node=8, **offload)


def test_options_normalise():
    assert strategy_from_options("ddp", gpus_per_node=1).kind == "single"
    assert strategy_from_options("FSDP-shard-grad-op", gpus_per_node=8).kind == "fsdp_grad_op"
    fsdp = strategy_from_options("fsdp", gpus_per_node=8, offload_param="cpu")
    assert (fsdp.offload_optimizer, fsdp.offload_param) == ("cpu", "cpu")


def ctx(write, yaml: str | None = None, json: str | None = None) -> EffectiveConfig:
    return CheckContext(
        accelerate=load_document(write("a.yaml", yaml)) if yaml else None,
        deepspeed=load_document(write("ds.json", json)) if json else None,
    ).effective


def test_multi_gpu_yaml(write):
    s = strategy_from_effective(ctx(write, "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\n"))
    assert (s.kind, s.gpus_per_node, s.nodes) == ("ddp", 8, 2)


def test_inline_deepspeed(write):
    s = strategy_from_effective(
        ctx(
            write,
            "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
            "  zero_stage: 3\n  offload_optimizer_device: cpu\n"
            "  offload_param_device: nvme\n",
        )
    )
    assert (s.kind, s.offload_optimizer, s.offload_param, s.world_size) == ("zero3", "cpu", "nvme", 8)


def test_deepspeed_json_wins_and_param_offload_below_stage_3_is_ignored(write):
    c = ctx(
        write,
        "distributed_type: DEEPSPEED\nnum_processes: 4\n",
        '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme"}, '
        '"offload_param": {"device": "cpu"}}}',
    )
    s = strategy_from_effective(c)
    assert (s.kind, s.offload_optimizer, s.offload_param) == ("zero2", "cpu", "none")


@pytest.mark.parametrize(
    ("fsdp", "kind", "version", "offload"),
    [
        ("fsdp_sharding_strategy: FULL_SHARD", "fsdp_full", 1, "none"),
        ("fsdp_sharding_strategy: 2", "fsdp_grad_op", 1, "none"),
        ("fsdp_sharding_strategy: HYBRID_SHARD\n  fsdp_offload_params: true", "fsdp_hybrid", 1, "cpu"),
        ("fsdp_version: 2\n  fsdp_reshard_after_forward: false", "fsdp_grad_op", 2, "none"),
        ("fsdp_version: 2\n  fsdp_reshard_after_forward: true", "fsdp_full", 2, "none"),
        ("version: 2\n  reshard_after_forward: false", "fsdp_grad_op", 2, "none"),  # the launcher adds fsdp_
        ("fsdp_version: 1\n  fsdp_reshard_after_forward: SHARD_GRAD_OP", "fsdp_full", 1, "none"),  # FSDP1 ignores it
        ("offload_params: 'true'", "fsdp_full", 1, "cpu"),  # str_to_bool, as the plugin reads it
    ],
)
def test_fsdp(write, fsdp, kind, version, offload):
    s = strategy_from_effective(
        ctx(write, f"distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  {fsdp}\n")
    )
    assert (s.kind, s.fsdp_version, s.offload_param) == (kind, version, offload)


@pytest.mark.parametrize(
    "yaml",
    [
        "distributed_type: DEEPSPEED\nnum_processes: eight\ndeepspeed_config: [1, 2]\n",
        "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: auto\n",
        "distributed_type: FSDP\nnum_processes: -3\nfsdp_config: null\n",
        "distributed_type: [oops]\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 7\n",
    ],
)
def test_malformed_values_never_crash(write, yaml):
    result = strategy_from_effective(ctx(write, yaml))
    assert result is None or isinstance(result, Strategy)


def test_no_gpu_types(write):
    assert strategy_from_effective(ctx(write, "distributed_type: TPU\n")) is None
    assert strategy_from_effective(CheckContext().effective) is None


@pytest.mark.parametrize(
    ("yaml", "json", "expected"),
    [
        ("distributed_type: MULTI_GPU\nmixed_precision: 'no'\n", None, "fp32"),
        ("distributed_type: MULTI_GPU\nmixed_precision: no\n", None, "fp32"),  # YAML 1.1: false
        ("distributed_type: MULTI_GPU\nmixed_precision: bf16\n", None, "mixed"),
        ("distributed_type: MULTI_GPU\n", None, None),
        ("distributed_type: DEEPSPEED\n", '{"bf16": {"enabled": true}}', "mixed"),
        ("distributed_type: DEEPSPEED\n", '{"fp16": {"enabled": "auto"}}', None),
        ("distributed_type: DEEPSPEED\n", '{"zero_optimization": {"stage": 2}}', "fp32"),
    ],
)
def test_training_precision(write, yaml, json, expected):
    assert training_precision(ctx(write, yaml, json)) == expected


def test_a_stage_accelerate_fills_is_the_stage_the_estimate_uses(write):
    c = ctx(write, "distributed_type: DEEPSPEED\nnum_processes: 8\n", '{"zero_optimization": {"stage": "auto"}}')
    assert strategy_from_effective(c).kind == "zero2"  # not stage 0: accelerate fills "auto" with 2
    alone = ctx(write, None, '{"zero_optimization": {"stage": "auto"}}')
    assert strategy_from_effective(alone).kind == "single"  # plain DeepSpeed drops it: stage 0


def test_an_unquoted_no_is_a_single_process_plan(write):
    s = strategy_from_effective(ctx(write, "distributed_type: NO\nnum_processes: 1\n"))
    assert (s.kind, s.world_size) == ("single", 1)


@pytest.mark.parametrize(("ran", "label"), [
    ({"distributed_type": "DEEPSPEED", "world_size": 2, "zero_stage": 3, "offload_optimizer": "cpu",
      "offload_param": "none", "mixed_precision": "bf16"}, "ZeRO-3 + CPU offload (optimizer)"),
    ({"distributed_type": "DEEPSPEED", "world_size": 2, "zero_stage": 0}, "DDP"),
    ({"distributed_type": "MULTI_CPU", "world_size": 2}, "DDP"),
    ({"distributed_type": "NO", "world_size": 1}, "single GPU"),
    ({"distributed_type": "FSDP", "world_size": 4}, "FSDP2 full shard"),
])
def test_what_the_trainer_ran_is_planned_by_the_same_logic(ran, label):
    from accelwiz.trainer.estimate_bridge import effective_from_settings

    effective = effective_from_settings(ran)
    assert strategy_from_effective(effective).label == label
    assert training_precision(effective) == ("mixed" if ran.get("mixed_precision") == "bf16" else "fp32")


@pytest.mark.parametrize(("fsdp_config", "orig"), [
    ("  fsdp_version: 1\n", True),  # `accelerate launch --fsdp_use_orig_params` defaults to true
    ("  fsdp_version: 1\n  fsdp_use_orig_params: false\n", False),
    ("  fsdp_version: 2\n", True),  # FSDP2 always keeps the original parameters
])
def test_fsdp_use_orig_params_is_read_with_the_launchers_default(write, fsdp_config, orig):
    s = strategy_from_effective(ctx(write, "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n" + fsdp_config))
    assert s.fsdp_use_orig_params is orig


def test_lora_under_fsdp1_with_use_orig_params_has_gradients_for_its_frozen_base():
    """torch's FSDP docs: mixing frozen and trainable parameters in a unit with use_orig_params makes the gradient
    memory 'equivalent to not freezing those parameters' (the H200 showed 66 fp32 shards of 388 MiB at the peak)."""
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.states import model_states
    from accelwiz.estimate.workload import Workload

    lora = Workload(resolve_model("llama-2-7b"), regime="lora", precision="mixed")
    mixed = model_states(lora, Strategy("fsdp_full", gpus_per_node=2, fsdp_version=1))
    apart = model_states(lora, Strategy("fsdp_full", gpus_per_node=2, fsdp_version=1, fsdp_use_orig_params=False))
    fsdp2 = model_states(lora, Strategy("fsdp_full", gpus_per_node=2, fsdp_version=2))
    frozen = lora.model.num_parameters
    assert mixed.gradients - apart.gradients == pytest.approx(4 * frozen / 2)
    assert apart.gradients == fsdp2.gradients == pytest.approx(4 * lora.trainable_parameters / 2)
