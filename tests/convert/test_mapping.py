"""`accelwiz convert`: ZeRO-2/3 <-> FSDP round trips on the corpus. Every converted config passes `check` (no
error), the DeepSpeed JSON it writes is accepted by DeepSpeed's own parser, and converting back gives the same
sharding, offload and precision."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from accelwiz.convert.mapping import convert
from accelwiz.document import load_document
from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules
from tests.conftest import corpus_accelerate_yamls, corpus_dir
from tests.crosscheck.test_deepspeed_config import deepspeed_config, fill_auto  # noqa: F401  (a fixture)

CORPUS = corpus_dir()


def _configs(kind: str) -> list[Path]:
    found = []
    for path, document in corpus_accelerate_yamls(CORPUS):
        if document.get("distributed_type") != kind:
            continue
        if document.get("compute_environment") == "AMAZON_SAGEMAKER":
            continue
        if kind == "DEEPSPEED":
            section = document.get("deepspeed_config")
            # the JSONs these YAMLs name are not in the corpus: the inline ZeRO-2/3 configs carry their stage
            if not isinstance(section, dict) or section.get("deepspeed_config_file") or \
                    section.get("zero_stage") not in (2, 3):
                continue
        found.append(path)
    return found


DEEPSPEED_YAMLS, FSDP_YAMLS = _configs("DEEPSPEED"), _configs("FSDP")


def errors(*paths: Path) -> list[str]:
    return sorted(f"{d.code} {d.message}" for d in check_paths(list(paths), select_rules()).diagnostics
                  if d.severity is Severity.ERROR)


def state(path: Path) -> tuple:
    """(sharded fully, offloaded, precision) of a config, as the run would use them."""
    unit = check_paths([path], []).units[0]
    effective = unit.effective
    if effective.uses_deepspeed:
        offloaded = {effective.offload_optimizer.value, effective.offload_param.value} - {"none", None}
        return effective.zero_stage.value == 3, bool(offloaded), effective.mixed_precision.value
    return effective.fsdp_sharding.value in ("FULL_SHARD", None), effective.fsdp_offload_params.value is True, \
        effective.mixed_precision.value


def test_the_corpus_has_both_kinds():
    if CORPUS is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS")
    assert len(DEEPSPEED_YAMLS) >= 5 and len(FSDP_YAMLS) >= 10


@pytest.mark.parametrize("path", DEEPSPEED_YAMLS, ids=lambda p: p.name[:60])
def test_deepspeed_to_fsdp_and_back(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "source.yaml"
    shutil.copy(path, source)
    fsdp_text, json_text, conversion = convert(source, "fsdp", tmp_path / "fsdp.yaml")
    assert json_text is None and conversion.not_carried  # the numerics note at least
    (tmp_path / "fsdp.yaml").write_text(fsdp_text)
    assert errors(tmp_path / "fsdp.yaml") == []
    back_text, back_json, _ = convert(tmp_path / "fsdp.yaml", "deepspeed", tmp_path / "back.yaml")
    (tmp_path / "back.yaml").write_text(back_text)
    (tmp_path / "back.ds.json").write_text(back_json)
    assert errors(tmp_path / "back.yaml") == []
    assert state(tmp_path / "back.yaml") == state(source)


@pytest.mark.parametrize("path", FSDP_YAMLS, ids=lambda p: p.name[:60])
def test_fsdp_to_deepspeed_and_back(path, tmp_path, monkeypatch, deepspeed_config):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "source.yaml"
    shutil.copy(path, source)
    yaml_text, json_text, _ = convert(source, "deepspeed", tmp_path / "ds.yaml")
    (tmp_path / "ds.yaml").write_text(yaml_text)
    (tmp_path / "ds.ds.json").write_text(json_text)
    assert errors(tmp_path / "ds.yaml") == []
    parsed = deepspeed_config(fill_auto(load_document(tmp_path / "ds.ds.json").data, 2), 2)
    assert not isinstance(parsed, str), parsed
    back_text, _, _ = convert(tmp_path / "ds.yaml", "fsdp", tmp_path / "back.yaml")
    (tmp_path / "back.yaml").write_text(back_text)
    assert errors(tmp_path / "back.yaml") == []
    before, after = state(source), state(tmp_path / "back.yaml")
    assert after[1:] == before[1:]  # offload and precision; NO_SHARD comes back sharded (FSDP2 always shards)
    assert after[0] == before[0] or load_document(source).get("fsdp_config", "fsdp_sharding_strategy") in (
        "NO_SHARD", 3, "3")


def test_cli_convert_names_what_is_not_carried_and_refuses_to_overwrite(cli, write):
    path = write("ds.yaml", "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\n"
                            "deepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: nvme\n"
                            "  offload_optimizer_nvme_path: /nvme\n  gradient_accumulation_steps: 4\n")
    result = cli("convert", str(path), "--to", "fsdp")
    out = path.with_name("ds.fsdp.yaml")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "NVMe offload" in result.stderr and "gradient_accumulation 4" in result.stderr
    assert "fsdp_reshard_after_forward: false" in out.read_text() and "fsdp_offload_params: true" in out.read_text()
    again = cli("convert", str(path), "--to", "fsdp")
    assert again.exit_code == 2 and "exists" in again.stderr
    same = cli("convert", str(path), "--to", "deepspeed")
    assert same.exit_code == 2 and "already uses DEEPSPEED" in same.stderr
