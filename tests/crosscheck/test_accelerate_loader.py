"""accelwiz against accelerate's own config loader, on the real-world corpus.

Whatever accelwiz passes (no schema, topology or FSDP error) must also load with accelerate's
`load_config_from_file`; accelerate's own negative example must be refused by both. The loader checks only
top-level keys and `distributed_type`, so this is a one-way check: accelwiz is meant to be stricter.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from accelwiz.rules.diagnostic import Severity
from tests.conftest import corpus_dir
from tests.rules.helpers import diagnostics

CORPUS = corpus_dir()
BLOCKING = ("AW0", "AW1", "AW3")


def accelerate_files() -> list[str]:
    if CORPUS is None:
        return []
    with (CORPUS / "index.tsv").open() as index:
        return sorted(
            row["file"] for row in csv.DictReader(index, delimiter="\t") if row["kind"] == "accelerate_yaml"
        )


def accelwiz_errors(path: Path) -> list[str]:
    return [
        f"{d.code} {d.message}" for d in diagnostics(path, select=BLOCKING) if d.severity is Severity.ERROR
    ]


def accelerate_load(path: Path) -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    load_config_from_file(str(path))


@pytest.mark.skipif(CORPUS is None, reason="corpus not found")
@pytest.mark.parametrize("name", accelerate_files())
def test_what_accelwiz_passes_accelerate_loads(name):
    path = CORPUS / "real" / name
    if accelwiz_errors(path):
        pytest.skip("accelwiz reports an error: the one-way check does not apply")
    accelerate_load(path)


def test_accelerates_own_negative_example_is_refused_by_both(corpus):
    path = corpus / "real" / "huggingface__accelerate__tests__test_configs__invalid_keys.yaml"
    assert any(error.startswith("AW001") for error in accelwiz_errors(path))
    with pytest.raises(ValueError, match="unknown keys"):
        accelerate_load(path)


@pytest.mark.parametrize(
    "text,accelerate_message",
    [
        ("distributed_type: TPU\n", "not a valid DistributedType"),
        ("num_processes: 2\n", "must be specified"),
        ("distributed_type: 'NO'\nipex_config:\n  ipex: true\n", "unknown keys"),
    ],
)
def test_refused_by_both(write, text, accelerate_message):
    path = write("a.yaml", text)
    assert accelwiz_errors(path)
    with pytest.raises(ValueError, match=accelerate_message):
        accelerate_load(path)


# The FSDP rules rest on how accelerate's plugin reads the FSDP_* variables that `accelerate launch` exports
# (the launcher always exports FSDP_SHARDING_STRATEGY, FULL_SHARD by default). These build the real plugin
# from such an environment. Sync/RAM-efficient loading are off: with them the plugin needs an accelerator.
LAUNCHER_ENV = {
    "FSDP_SYNC_MODULE_STATES": "false",
    "FSDP_CPU_RAM_EFFICIENT_LOADING": "false",
    "FSDP_SHARDING_STRATEGY": "FULL_SHARD",
}


def fsdp_plugin(monkeypatch, **env: str):
    from accelerate.utils import FullyShardedDataParallelPlugin

    for name, value in {**LAUNCHER_ENV, **env}.items():
        monkeypatch.setenv(name, value)
    return FullyShardedDataParallelPlugin()


def test_fsdp1_ignores_the_strategy_in_reshard_after_forward(monkeypatch):  # AW305
    plugin = fsdp_plugin(monkeypatch, FSDP_VERSION="1", FSDP_RESHARD_AFTER_FORWARD="shard_grad_op")
    assert plugin.sharding_strategy.name == "FULL_SHARD" and plugin.reshard_after_forward is None


def test_fsdp2_ignores_the_sharding_strategy_and_forward_prefetch(monkeypatch):  # AW301, AW302
    plugin = fsdp_plugin(
        monkeypatch,
        FSDP_VERSION="2",
        FSDP_SHARDING_STRATEGY="NO_SHARD",
        FSDP_RESHARD_AFTER_FORWARD="true",
        FSDP_FORWARD_PREFETCH="true",
    )
    assert plugin.reshard_after_forward is True and plugin.forward_prefetch is None


def test_fsdp2_refuses_a_strategy_name_in_reshard_after_forward(monkeypatch):  # AW304
    with pytest.raises(ValueError, match="invalid truth value full_shard"):
        fsdp_plugin(monkeypatch, FSDP_VERSION="2", FSDP_RESHARD_AFTER_FORWARD="full_shard")


# The topology and fp8 rules rest on how `accelerate launch` merges the file into its arguments.
def launcher_args(path: Path):
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    args = launch_command_parser().parse_args(["--config_file", str(path), "train.py"])
    return _validate_launch_command(args)[0]


def test_no_with_many_processes_takes_the_single_process_launcher(write):  # AW112
    args = launcher_args(write("a.yaml", "distributed_type: 'NO'\nnum_processes: 8\n"))
    assert not (args.multi_gpu or args.use_fsdp or args.use_deepspeed or args.use_megatron_lm or args.tpu)


def test_launcher_keeps_its_defaults_over_the_file(write):  # AW110
    args = launcher_args(
        write(
            "a.yaml",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: c10d\nenable_cpu_affinity: true\n",
        )
    )
    assert args.rdzv_backend == "static" and args.enable_cpu_affinity is False


def test_integer_gpu_ids_crash_the_launcher(write):  # why the model wants gpu_ids as a string
    with pytest.raises(AttributeError, match="split"):
        launcher_args(write("a.yaml", "distributed_type: 'NO'\ngpu_ids: 0\n"))


def test_string_override_linear_precision_breaks_the_recipe_flags(write):  # AW423
    from accelerate.utils.environment import parse_flag_from_env
    from accelerate.utils.launch import setup_fp8_env

    args = launcher_args(
        write(
            "a.yaml",
            "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n"
            "fp8_config:\n  override_linear_precision: (false, false, false)\n",
        )
    )
    env = setup_fp8_env(args, {})
    assert env["ACCELERATE_FP8_OVERRIDE_FPROP"] == "("
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ACCELERATE_FP8_OVERRIDE_FPROP", env["ACCELERATE_FP8_OVERRIDE_FPROP"])
        with pytest.raises(ValueError, match="invalid truth value"):
            parse_flag_from_env("ACCELERATE_FP8_OVERRIDE_FPROP")
