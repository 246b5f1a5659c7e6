"""The Trainer's --fsdp/--fsdp_config against transformers 5 and accelerate themselves: the real HfArgumentParser
builds TrainingArguments from the same command line, the real `accelerate launch` turns the same YAML into the
FSDP_* environment, and the real FullyShardedDataParallelPlugin is built from both, as
`Trainer.create_accelerator_and_postprocess` builds it. accelwiz's plugin arguments must equal transformers', and
its effective values must be what the plugin ends up with. FSDP1 plugins need a GPU (sync_module_states, which the
Trainer always passes for FSDP1, asks for the current device), so those cases run only where one is present."""

from __future__ import annotations

import json
import os

import pytest

from accelwiz.config.trainer_fsdp import trainer_fsdp
from accelwiz.config.training_args import parse_argv
from accelwiz.rules.engine import check_paths

DDP = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
FSDP1_YAML = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n"
              "  fsdp_sharding_strategy: SHARD_GRAD_OP\n  fsdp_offload_params: true\n"
              "  fsdp_state_dict_type: SHARDED_STATE_DICT\n  fsdp_activation_checkpointing: true\n"
              "  fsdp_auto_wrap_policy: SIZE_BASED_WRAP\n  fsdp_min_num_params: 5000\n")
FSDP2_YAML = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
              "  fsdp_reshard_after_forward: false\n  fsdp_offload_params: true\n")

CASES = [
    (DDP, ["--fsdp", "full_shard auto_wrap"]),
    (DDP, ["--fsdp", "shard_grad_op offload"]),
    (DDP, ["--fsdp"]),
    (DDP, ["--fsdp", "--fsdp_config", json.dumps({"fsdp_auto_wrap_policy": "SIZE_BASED_WRAP",
                                                    "min_num_params": 20000, "activation_checkpointing": "true",
                                                    "state_dict_type": "SHARDED_STATE_DICT"})]),
    (DDP, ["--fsdp", "full_shard", "--fsdp_config", "{\"reshard_after_forward\": false}"]),  # the config wins
    (FSDP1_YAML, ["--fsdp", "full_shard auto_wrap"]),  # the Trainer's FSDP2 over the YAML's FSDP1
    (FSDP2_YAML, ["--fsdp", "--fsdp_config", "{\"cpu_ram_efficient_loading\": false, \"auto_wrap_policy\": "
                                               "\"NO_WRAP\"}"]),
    (DDP, ["--fsdp", "shard_grad_op", "--fsdp_config", "{\"version\": 1}"]),  # FSDP1: the strategy is ignored
    (FSDP1_YAML, ["--fsdp", "full_shard", "--fsdp_config", "{\"version\": 1}"]),
    (FSDP2_YAML + "  fsdp_sharding_strategy: SHARD_GRAD_OP\n", ["--fsdp", "full_shard", "--fsdp_config",
                                                             "{\"version\": 1}"]),  # exported all the same
]


def _transformers(argv: list[str], tmp_path):
    from transformers import HfArgumentParser, TrainingArguments

    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
        [*argv, "--output_dir", str(tmp_path / "out"), "--report_to", "none"])
    return args


def _launcher_env(path) -> dict[str, str]:
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_multi_gpu_env

    args = _validate_launch_command(launch_command_parser().parse_args(["--config_file", str(path), "t.py"]))[0]
    return {k: v for k, v in prepare_multi_gpu_env(args).items() if k.startswith("FSDP_")}


@pytest.mark.parametrize("yaml,argv", CASES)
def test_plugin_arguments_and_effective_values_match_the_libraries(write, tmp_path, monkeypatch, yaml, argv):
    from accelerate.utils import FullyShardedDataParallelPlugin

    for name in [n for n in os.environ if n.startswith("FSDP_")]:
        monkeypatch.delenv(name)
    path = write("accelerate.yaml", yaml)
    real = _transformers(argv, tmp_path)
    ours = trainer_fsdp(parse_argv(argv))
    assert ours is not None and ours.problem is None
    assert ours.plugin == real.fsdp_plugin_args
    if real.fsdp_plugin_args["fsdp_version"] == 1 and not __import__("torch").cuda.is_available():
        pytest.skip("the FSDP1 plugin asks for the current device (sync_module_states)")
    for name, value in _launcher_env(path).items():
        monkeypatch.setenv(name, value)
    plugin = FullyShardedDataParallelPlugin(**real.fsdp_plugin_args)
    effective = check_paths([path], training_args=parse_argv(argv)).units[0].effective
    assert effective.is_fsdp and effective.fsdp_version.value == plugin.fsdp_version
    sharding = (plugin.sharding_strategy or plugin.reshard_after_forward) if plugin.fsdp_version == 1 else (
        "FULL_SHARD" if plugin.reshard_after_forward else "SHARD_GRAD_OP")
    assert effective.fsdp_sharding.value == getattr(sharding, "name", sharding)
    offloaded = plugin.cpu_offload.offload_params if plugin.fsdp_version == 1 else (
        type(plugin.cpu_offload).__name__ == "CPUOffloadPolicy")
    assert effective.fsdp_offload_params.value is offloaded
    assert effective.fsdp_state_dict_type.value == plugin.state_dict_type.name
    assert effective.fsdp_activation_checkpointing.value is plugin.activation_checkpointing
    assert effective.fsdp_cpu_ram_efficient_loading.value is plugin.cpu_ram_efficient_loading
    policy = getattr(plugin.auto_wrap_policy, "__name__", None)
    expected = {"transformer_auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "size_based_auto_wrap_policy":
                "SIZE_BASED_WRAP", None: "NO_WRAP"}[policy]
    assert effective.fsdp_auto_wrap_policy.value == expected
    if expected == "SIZE_BASED_WRAP":
        assert effective.fsdp_min_num_params.value == plugin.min_num_params
    prefetch = plugin.backward_prefetch.name if plugin.backward_prefetch is not None else "NO_PREFETCH"
    assert effective.fsdp_backward_prefetch.value == prefetch


@pytest.mark.parametrize("argv,message", [
    (["--fsdp", "hybrid_shard"], "only available with FSDP1"),
    (["--fsdp", "full_shard wrap"], "Unknown `fsdp` option: wrap"),
    (["--fsdp", "--fsdp_config", "{\"auto_wrap_policy\": \"transformer_based_wrap\"}"], "must be one of"),
    (["--fsdp", "--fsdp_config", "{\"reshard_after_forward\": \"full_shard\"}"], "invalid truth value"),
])
def test_refused_by_both(tmp_path, argv, message):
    with pytest.raises(ValueError, match=message):
        _transformers(argv, tmp_path)
    ours = trainer_fsdp(parse_argv(argv))
    assert ours is not None and ours.problem is not None and message.split("`")[0] in ours.problem


def test_a_config_file_is_read_with_or_without_the_prefix(tmp_path):
    config = tmp_path / "fsdp.json"
    config.write_text(json.dumps({"fsdp_version": 2, "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer",
                                  "fsdp_offload_params": True, "cpu_offload": True}))
    argv = ["--fsdp", "full_shard auto_wrap", "--fsdp_config", str(config)]
    real = _transformers(argv, tmp_path)
    ours = trainer_fsdp(parse_argv(argv))
    assert ours.plugin == real.fsdp_plugin_args
    assert ours.plugin["transformer_cls_names_to_wrap"] == "LlamaDecoderLayer" and ours.plugin["cpu_offload"]


@pytest.mark.parametrize("text", [
    "fsdp: [shard_grad_op, offload]\nfsdp_config:\n  fsdp_min_num_params: 1000\n  auto_wrap_policy: SIZE_BASED_WRAP\n",
    "fsdp: true\nfsdp_config: '{\"activation_checkpointing\": \"yes\"}'\n",
    "fsdp: full_shard auto_wrap\n",
])
def test_an_arguments_file_reads_as_hf_argument_parser_reads_it(tmp_path, text):
    from transformers import HfArgumentParser, TrainingArguments

    from accelwiz.config.training_args import parse_file

    path = tmp_path / "args.yaml"
    path.write_text(text + f"output_dir: {tmp_path / 'out'}\nreport_to: none\n")
    (real,) = HfArgumentParser(TrainingArguments).parse_yaml_file(str(path))
    assert trainer_fsdp(parse_file(path)).plugin == real.fsdp_plugin_args
