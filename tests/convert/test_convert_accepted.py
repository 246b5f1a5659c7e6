"""`accelwiz convert` results accepted by the libraries themselves, on the corpus (CPU, no mocks).

- Every ZeRO-2/3 DeepSpeed config of the corpus (the inline YAMLs, and every ZeRO-2/3 JSON paired with a YAML that
  names it) converts to an FSDP2 config that `check` passes and from which accelerate's launcher
  (`_validate_launch_command` -> `prepare_multi_gpu_env`) and `FullyShardedDataParallelPlugin` build the sharding
  and offload the source asked for.
- Every FSDP config of the corpus with a ZeRO counterpart converts to a DeepSpeed YAML + JSON that `check` passes,
  that accelerate's DeepSpeed launcher (`prepare_deepspeed_cmd_env`) and `DeepSpeedPlugin` accept (accelerate
  refuses mixed_precision beside deepspeed_config_file), and whose JSON DeepSpeed's own `DeepSpeedConfig` parses
  once "auto" is filled as accelerate fills it.
- The way back lands on the stage or sharding the source had.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from accelwiz.convert.unit import load_unit
from accelwiz.document import load_document
from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules
from tests.conftest import corpus_dir
from tests.crosscheck.test_deepspeed_config import deepspeed_config, fill_auto  # noqa: F401  (a fixture)
from tests.ports import free_port

CORPUS = corpus_dir()
ZERO_STAGES = (2, 3)
FSDP_TO_STAGE = {"FULL_SHARD": 3, "SHARD_GRAD_OP": 2, "HYBRID_SHARD": 3, "HYBRID_SHARD_ZERO2": 2}


def _real() -> list[Path]:
    return sorted((CORPUS / "real").iterdir()) if CORPUS is not None else []


def _accelerate_yamls(kind: str) -> list[Path]:
    found = []
    for path in _real():
        if path.suffix not in (".yaml", ".yml"):
            continue
        try:
            unit = load_unit(path)
        except Exception:  # unreadable, or names a JSON the corpus does not hold: other tests' business
            continue
        effective = unit.effective
        if effective.is_sagemaker or effective.distributed_type.value != kind:
            continue
        if kind == "DEEPSPEED" and effective.zero_stage.value not in ZERO_STAGES:
            continue
        if kind == "FSDP" and effective.fsdp_sharding.value not in FSDP_TO_STAGE:
            continue
        found.append(path)
    return found


def _zero_jsons() -> list[Path]:
    """Corpus DeepSpeed JSONs with a concrete ZeRO-2/3 stage (a YAML naming them is written in the test)."""
    found = []
    for path in _real():
        if path.suffix != ".json":
            continue
        try:
            document = load_document(path)
        except Exception:
            continue
        if document.kind == "deepspeed" and document.get("zero_optimization", "stage") in ZERO_STAGES:
            found.append(path)
    return found


DEEPSPEED_YAMLS, FSDP_YAMLS, ZERO_JSONS = _accelerate_yamls("DEEPSPEED"), _accelerate_yamls("FSDP"), _zero_jsons()


def convert(cli, source: Path, target: str, out: Path):
    result = cli("convert", str(source), "--to", target, "-o", str(out), "--force")
    assert result.exit_code == 0, result.stderr + result.stdout
    return result


def errors(*paths: Path) -> list[str]:
    return [f"{d.code} {d.message}" for d in check_paths(list(paths), select_rules()).diagnostics
            if d.severity is Severity.ERROR]




def launcher_args(path: Path):
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    # a config without num_processes is launched with --num_processes (accelerate's SLURM template does)
    extra = [] if "num_processes" in yaml.safe_load(path.read_text()) else ["--num_processes", "2"]
    # the launcher refuses a multi-node config whose port something on this (shared) machine holds: take a free one
    extra += ["--main_process_port", str(free_port())]
    args = launch_command_parser().parse_args(["--config_file", str(path), *extra, "train.py"])
    return _validate_launch_command(args)


def fsdp_plugin(path: Path, monkeypatch):
    """accelerate's FSDP launch path on CPU: the env the launcher gives the workers, then the plugin they build."""
    from accelerate.utils import FullyShardedDataParallelPlugin
    from accelerate.utils.launch import prepare_multi_gpu_env

    args, _, _ = launcher_args(path)
    assert args.use_fsdp
    for name, value in prepare_multi_gpu_env(args).items():
        monkeypatch.setenv(name, value)
    return FullyShardedDataParallelPlugin()


def deepspeed_plugin(path: Path, monkeypatch):
    """accelerate's DeepSpeed launch path on CPU, as `launch_command` prepares it, then DeepSpeedPlugin."""
    from accelerate.utils import DeepSpeedPlugin
    from accelerate.utils.launch import prepare_deepspeed_cmd_env

    args, defaults, mixed_precision_from_file = launcher_args(path)
    assert args.use_deepspeed
    fields = list(defaults.deepspeed_config.keys()) if defaults else []
    if mixed_precision_from_file:
        fields.append("mixed_precision")
    args.deepspeed_fields_from_accelerate_config = ",".join(fields)
    _, env = prepare_deepspeed_cmd_env(args)
    for name, value in env.items():
        if name.startswith("ACCELERATE_"):
            monkeypatch.setenv(name, value)
    return DeepSpeedPlugin()


def assert_fsdp_matches(path: Path, monkeypatch, stage: int, offloaded: bool) -> None:
    from torch.distributed.fsdp import CPUOffloadPolicy

    plugin = fsdp_plugin(path, monkeypatch)
    assert plugin.fsdp_version == 2
    assert plugin.reshard_after_forward is (stage == 3)
    assert isinstance(plugin.cpu_offload, CPUOffloadPolicy) is offloaded


def test_the_corpus_has_what_these_tests_need():
    if CORPUS is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS")
    assert len(DEEPSPEED_YAMLS) >= 3 and len(FSDP_YAMLS) >= 10 and len(ZERO_JSONS) >= 20


@pytest.mark.parametrize("path", DEEPSPEED_YAMLS, ids=lambda p: p.name[:60])
def test_deepspeed_yaml_to_fsdp_builds_the_plugin_and_comes_back(path, tmp_path, cli, monkeypatch):
    effective = load_unit(path).effective
    stage = effective.zero_stage.value
    offloaded = {effective.offload_optimizer.value, effective.offload_param.value} != {"none"}
    fsdp = tmp_path / "fsdp.yaml"
    convert(cli, path, "fsdp", fsdp)
    assert errors(fsdp) == []
    assert_fsdp_matches(fsdp, monkeypatch, stage, offloaded)
    back = tmp_path / "back.yaml"
    convert(cli, fsdp, "deepspeed", back)
    assert errors(back) == []
    assert deepspeed_plugin(back, monkeypatch).zero_stage == stage


@pytest.mark.parametrize("path", ZERO_JSONS, ids=lambda p: p.name[:60])
def test_every_zero_json_converts_with_its_yaml(path, tmp_path, cli, monkeypatch):
    source = tmp_path / "zero.json"
    shutil.copy(path, source)
    config = tmp_path / "zero.yaml"
    config.write_text(f"distributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\n"
                      f"deepspeed_config:\n  deepspeed_config_file: {source}\n")
    effective = load_unit(config).effective
    stage = effective.zero_stage.value
    # DeepSpeed drops parameter offload below stage 3: only what the run would do is converted
    offloaded = effective.offload_optimizer.value not in ("none", None) or (
        stage == 3 and effective.offload_param.value not in ("none", None))
    fsdp = tmp_path / "fsdp.yaml"
    convert(cli, config, "fsdp", fsdp)
    assert errors(fsdp) == []
    assert_fsdp_matches(fsdp, monkeypatch, stage, offloaded)


@pytest.mark.parametrize("path", FSDP_YAMLS, ids=lambda p: p.name[:60])
def test_fsdp_to_deepspeed_is_accepted_by_accelerate_and_deepspeed(path, tmp_path, cli, monkeypatch,
                                                                   deepspeed_config):  # noqa: F811
    effective = load_unit(path).effective
    stage = FSDP_TO_STAGE[effective.fsdp_sharding.value]
    out = tmp_path / "zero.yaml"
    convert(cli, path, "deepspeed", out)
    written = out.with_name("zero.ds.json")
    assert errors(out, written) == []
    plugin = deepspeed_plugin(out, monkeypatch)  # refuses mixed_precision beside deepspeed_config_file
    assert plugin.zero_stage == stage
    offloaded = effective.fsdp_offload_params.value is True
    assert (plugin.offload_optimizer_device == "cpu") is offloaded
    data = json.loads(written.read_text())
    parsed = deepspeed_config(fill_auto(data))
    assert not isinstance(parsed, str), parsed
    assert parsed.zero_optimization_stage == stage
    back = tmp_path / "back.yaml"
    convert(cli, out, "fsdp", back)
    assert errors(back) == []
    assert_fsdp_matches(back, monkeypatch, stage, offloaded)
