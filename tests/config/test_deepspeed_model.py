"""The DeepSpeed JSON model: what it accepts, how each mistake is classified, and that its blocks know exactly
the keys DeepSpeed 0.19.8 knows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.config import deepspeed as model
from accelwiz.config import deepspeed_zero as zero
from accelwiz.config.validate import known_keys, schema_issues
from accelwiz.document import parse_text


def issues(data: dict) -> list[tuple[str, str]]:
    document = parse_text(json.dumps(data), Path("ds.json"), kind="deepspeed")
    return [(i.kind, ".".join(map(str, i.path))) for i in schema_issues(document, model.DeepSpeedConfig)]


def test_a_full_config_validates():
    assert issues({
        "train_batch_size": "auto", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
        "gradient_clipping": 1, "steps_per_print": 1e5, "bf16": {"enabled": "auto"},
        "fp16": {"enabled": False},
        "zero_optimization": {"stage": 3, "overlap_comm": True, "reduce_bucket_size": 5e8,
                              "stage3_prefetch_bucket_size": "auto", "max_live_parameters": 1e9,
                              "offload_param": {"device": "cpu", "pin_memory": True},
                              "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme", "ratio": 0.5}},
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": [0.9, 0.95]}},
        "scheduler": {"type": "WarmupLR", "params": {}},
        "activation_checkpointing": {"partition_activations": True},
        "aio": {"block_size": 1048576}, "tensorboard": {"enabled": True, "output_path": "tb"},
        "comms_logger": {"enabled": False}, "data_types": {"grad_accum_dtype": "fp32"},
        "tensor_parallel": {"autotp_size": 2}, "compile": {"deepcompile": True}, "_comment": "ignored",
    }) == []


@pytest.mark.parametrize("data,expected", [
    ({"gradient_accumulation_steps": "8"}, ("numeric-string", "gradient_accumulation_steps")),
    ({"zero_optimization": {"reduce_bucket_size": "5e8"}},
     ("float-for-int", "zero_optimization.reduce_bucket_size")),
    ({"zero_optimization": {"reduce_bucket_size": 2.5}},
     ("wrong-type", "zero_optimization.reduce_bucket_size")),
    ({"bf16": {"enabled": "true"}}, ("wrong-type", "bf16.enabled")),
    ({"zero_optimization": "yes"}, ("wrong-type", "zero_optimization")),  # a boolean is DeepSpeed's legacy stage 1
    ({"zero_optimization": {"stage": 4}}, ("invalid-value", "zero_optimization.stage")),
    ({"zero_optimization": {"offload_param": {"device": "gpu"}}},
     ("invalid-value", "zero_optimization.offload_param.device")),
    ({"train_micro_batch_size_per_gpu": 0}, ("invalid-value", "train_micro_batch_size_per_gpu")),
    ({"steps_per_print": "auto"}, ("wrong-type", "steps_per_print")),
    ({"zero_optimization": {"overlap_comms": True}}, ("unknown-key", "zero_optimization.overlap_comms")),
    ({"zero_optimization": {"cpu_offload": True}}, ("legacy-key", "zero_optimization.cpu_offload")),
    ({"zero_optimization": {"stage3_gather_fp16_weights_on_model_save": True}},
     ("legacy-key", "zero_optimization.stage3_gather_fp16_weights_on_model_save")),
    ({"bfloat16": {"enabled": True}}, ("legacy-key", "bfloat16")),
    ({"elasticity": {"enabled": True}}, ("removed-key", "elasticity")),
    ({"zero_optimization": {"mics_shard_size": 8}}, ("removed-key", "zero_optimization.mics_shard_size")),
    ({"fp16": {"enabled": True, "opt_level": "O2"}}, ("removed-key", "fp16.opt_level")),
    ({"stage3_max_live_parameters": 1e9}, ("misplaced-key", "stage3_max_live_parameters")),
    ({"mixed_precision": "bf16"}, ("misplaced-key", "mixed_precision")),
    ({"num_processes": 8}, ("misplaced-key", "num_processes")),
    ({"zero_optimization": {"train_micro_batch_size_per_gpu": 4}},
     ("misplaced-key", "zero_optimization.train_micro_batch_size_per_gpu")),
])
def test_each_mistake_is_classified(data, expected):
    assert expected in issues(data)


def test_integral_floats_and_auto_are_fine_where_deepspeed_takes_them():
    assert issues({"zero_optimization": {"stage": "auto", "sub_group_size": 1e12,
                                         "reduce_bucket_size": "auto"},
                   "train_batch_size": 1.6e1, "fp16": {"enabled": "auto", "loss_scale": 0}}) == []


def test_alias_and_name_together_is_left_to_its_rule():
    # DeepSpeed refuses it; AW229 says so with both names instead of a misleading "unknown key"
    assert issues({"zero_optimization": {"stage3_max_live_parameters": 1, "max_live_parameters": 1}}) == []


def test_misplaced_hints_name_the_destination():
    text = '{"mixed_precision": "bf16", "overlap_comm": true}'
    document = parse_text(text, Path("ds.json"), kind="deepspeed")
    hints = {i.path: i.hint for i in schema_issues(document, model.DeepSpeedConfig)}
    assert hints[("mixed_precision",)] == ("`mixed_precision` is an Accelerate setting: put it in the "
                                           "Accelerate YAML")
    assert hints[("overlap_comm",)] == "move `overlap_comm` into `zero_optimization`"


# --- the blocks against DeepSpeed's own pydantic models ----------------------------------------------------


def _deepspeed_keys(config_class) -> set[str]:
    keys = set()
    for name, info in config_class.model_fields.items():
        extra = info.json_schema_extra or {}
        if isinstance(extra, dict) and extra.get("deprecated"):
            continue  # deprecated names are LEGACY_KEYS here
        keys |= {name, info.alias} - {None}
    return keys


def _ours(section) -> set[str]:
    return set(known_keys(section))


@pytest.fixture(scope="module")
def deepspeed_models():
    pytest.importorskip("deepspeed")
    from deepspeed.comm.config import CommsLoggerConfig
    from deepspeed.monitor.config import CometConfig, CSVConfig, TensorBoardConfig, WandbConfig
    from deepspeed.runtime.config import CompileConfig, HybridEngineConfig
    from deepspeed.runtime.precision_config import DeepSpeedBF16Config, DeepSpeedFP16Config
    from deepspeed.runtime.zenflow.zenflow_config import ZenFlowConfig
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig
    from deepspeed.runtime.zero.offload_config import (
        DeepSpeedZeroOffloadOptimizerConfig,
        DeepSpeedZeroOffloadParamConfig,
    )

    return [
        (zero.ZeroOptimization, DeepSpeedZeroConfig), (zero.OffloadParam, DeepSpeedZeroOffloadParamConfig),
        (zero.OffloadOptimizer, DeepSpeedZeroOffloadOptimizerConfig), (zero.ZenFlow, ZenFlowConfig),
        (model.FP16, DeepSpeedFP16Config), (model.BF16, DeepSpeedBF16Config), (model.Compile, CompileConfig),
        (model.HybridEngine, HybridEngineConfig), (model.CommsLogger, CommsLoggerConfig),
        (model.MonitorOutput, TensorBoardConfig), (model.MonitorOutput, CSVConfig),
        (model.Wandb, WandbConfig),
        (model.Comet, CometConfig),
    ]


def test_blocks_know_exactly_deepspeeds_keys(deepspeed_models):
    for ours, theirs in deepspeed_models:
        assert _ours(ours) == _deepspeed_keys(theirs), f"{ours.__name__} vs {theirs.__name__}"


def test_legacy_keys_are_deepspeeds_deprecated_fields(deepspeed_models):
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    deprecated = {name for name, info in DeepSpeedZeroConfig.model_fields.items()
                  if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("deprecated")}
    assert deprecated == set(model.ZeroOptimization.LEGACY_KEYS)


def test_removed_keys_match_deepspeed_0_19_8():
    config = pytest.importorskip("deepspeed.runtime.config")
    assert set(config._REMOVED_TOP_LEVEL_CONFIG_KEYS) == set(model.DeepSpeedConfig.REMOVED_KEYS)
    assert set(config._REMOVED_ZERO_CONFIG_KEYS) == set(model.ZeroOptimization.REMOVED_KEYS)


def test_top_level_keys_cover_deepspeeds_constants():
    constants = pytest.importorskip("deepspeed.runtime.constants")
    top_level = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                 "managed_gradient_accumulation", "steps_per_print", "communication_data_type",
                 "seq_parallel_communication_data_type", "prescale_gradients", "gradient_predivide_factor",
                 "gradient_allreduce_op", "disable_allgather", "disable_python_gc", "checkpoint",
                 "data_types",
                 "dataloader_drop_last", "use_data_before_expert_parallelism", "log_level", "torch_autocast",
                 "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "optimizer", "scheduler"}
    assert top_level <= {v for k, v in vars(constants).items() if k.isupper() and isinstance(v, str)}
    assert top_level <= _ours(model.DeepSpeedConfig)


def test_exported_json_schema_accepts_auto_where_the_model_ignores_it():
    jsonschema = pytest.importorskip("jsonschema")
    schema = model.DeepSpeedConfig.model_json_schema(by_alias=True)
    jsonschema.validate({"zero_optimization": {"stage": "auto", "offload_param": {"device": "auto"}},
                         "fp16": {"enabled": "auto"}, "train_batch_size": "auto"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"zero_optimization": {"stage": 4}}, schema)


def messages(data: dict) -> list[str]:
    document = parse_text(json.dumps(data), Path("ds.json"), kind="deepspeed")
    return [i.message for i in schema_issues(document, model.DeepSpeedConfig)]


def test_a_bound_is_named_even_where_auto_is_also_allowed():
    # `PositiveLaxInt | Auto`: a 0 broke the bound, it did not fail to be "auto"
    assert messages({"gradient_accumulation_steps": 0}) == ["`gradient_accumulation_steps` is 0: input should be "
                                                            "greater than 0"]


def test_integer_choices_are_shown_as_integers():
    # the string '3' must not look like one of the choices
    assert messages({"zero_optimization": {"stage": "3"}}) == ["`zero_optimization.stage` is '3'; expected one of "
                                                               "0, 1, 2, 3"]


def test_a_quoted_exponent_in_json_is_not_blamed_on_yaml():
    [message] = messages({"zero_optimization": {"reduce_bucket_size": "5e8"}})
    assert "YAML" not in message and "quoted" in message


def test_a_quoted_number_is_told_to_drop_the_quotes():
    document = parse_text(json.dumps({"zero_optimization": {"stage": "3"}}), Path("ds.json"), kind="deepspeed")
    [issue] = schema_issues(document, model.DeepSpeedConfig)
    assert issue.hint == "remove the quotes: 3"
