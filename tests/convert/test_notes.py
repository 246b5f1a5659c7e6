"""What `convert` says it cannot carry, and the numerics it explains: every DeepSpeed setting of every corpus JSON
is either read by the conversion or named, and the precision claims hold in the installed libraries."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from accelwiz.convert.leftovers import NAMED_ELSEWHERE, READ, deepspeed_settings_not_carried, leaf_paths
from accelwiz.convert.numerics import numerical_differences
from accelwiz.document import load_document
from tests.conftest import corpus_dir

CORPUS = corpus_dir()
JSONS = sorted((CORPUS / "real").glob("*.json")) if CORPUS is not None else []


@pytest.mark.parametrize("path", JSONS, ids=lambda p: p.name[:60])
def test_every_deepspeed_setting_is_read_or_named(path):
    document = load_document(path, kind="deepspeed")
    text = "\n".join(deepspeed_settings_not_carried(document.data))
    for key, value in leaf_paths(document.data):
        if key in READ or key.split(".")[0] in NAMED_ELSEWHERE or value in (False, None) or key.startswith("fp16."):
            continue
        # named whole, or through the block that explains it (`aio`, `activation_checkpointing`)
        assert any(part in text for part in (key, ".".join(key.split(".")[:2]), key.split(".")[0])), key


def test_named_settings_come_with_reasons_where_one_matters():
    lines = deepspeed_settings_not_carried({
        "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/nvme"},
                              "overlap_comm": True},
        "aio": {"block_size": 1048576}, "steps_per_print": 10, "wall_clock_breakdown": False,
    })
    assert lines == ["zero_optimization.offload_param.nvme_path: FSDP offloads to CPU memory only",
                     "aio: NVMe I/O: FSDP offloads to CPU memory only",
                     "DeepSpeed-only settings with no FSDP meaning: zero_optimization.overlap_comm, steps_per_print"]


def test_numerics_follow_the_precision_and_the_json():
    assert numerical_differences("no") == numerical_differences(None) and "nothing is upcast" in \
        numerical_differences("no")[0]
    bf16 = " ".join(numerical_differences("bf16"))
    assert "fp32 master weights" in bf16 and "torch.autocast" in bf16 and "loss scaling" not in bf16
    assert "loss scaling" in " ".join(numerical_differences("fp16"))
    special = " ".join(numerical_differences("bf16", {"bf16": {"enabled": True, "bf16_master_weights_and_grads": True},
                                                      "communication_data_type": "fp32"}))
    assert "keeps bf16 master weights" in special and "reduced in fp32 by DeepSpeed" in special


def test_fsdp_gathers_and_reduces_in_the_mixed_precision_dtype(monkeypatch):
    """The claim 'in bf16 by FSDP (reduce_dtype)': accelerate's own policy for mixed_precision bf16."""
    import torch
    from accelerate.utils import FullyShardedDataParallelPlugin

    monkeypatch.setenv("FSDP_VERSION", "2")
    plugin = FullyShardedDataParallelPlugin()
    plugin.set_mixed_precision("bf16")
    policy = plugin.mixed_precision_policy
    assert policy.param_dtype == torch.bfloat16 and policy.reduce_dtype == torch.bfloat16


@pytest.mark.parametrize(("fp16", "bf16", "expected"), [(True, False, "float16"), (False, True, "bfloat16")])
def test_deepspeed_reduces_in_the_16_bit_dtype_by_default(fp16, bf16, expected):
    """The claim 'gradients reduced in bf16 by DeepSpeed': DeepSpeedEngine.communication_data_type's own code."""
    import torch

    engine = pytest.importorskip("deepspeed.runtime.engine")
    fake = SimpleNamespace(_config=SimpleNamespace(communication_data_type=None),
                           fp16_enabled=lambda: fp16, bfloat16_enabled=lambda: bf16)
    assert engine.DeepSpeedEngine.communication_data_type.fget(fake) == getattr(torch, expected)


def _fsdp_yamls() -> list:
    found = []
    for path in sorted((CORPUS / "real").glob("*.yaml")) if CORPUS is not None else []:
        try:
            section = load_document(path).get("fsdp_config")
        except Exception:  # unreadable corpus files are other tests' business
            continue
        if isinstance(section, dict) and section:
            found.append(path)
    return found


FSDP_YAMLS = _fsdp_yamls()


@pytest.mark.parametrize("path", FSDP_YAMLS, ids=lambda p: p.name[:60])
def test_every_fsdp_setting_is_read_or_named(cli, path, tmp_path):
    """Through the command: each fsdp_config key the conversion does not read is named in its report."""
    from accelwiz.convert.leftovers import FSDP_READ

    document = load_document(path)
    if document.get("distributed_type") != "FSDP" or document.get("compute_environment") == "AMAZON_SAGEMAKER":
        pytest.skip("not an FSDP config accelerate launches locally")
    result = cli("convert", str(path), "--to", "deepspeed", "-o", str(tmp_path / "zero.yaml"))
    assert result.exit_code in (0, 1), result.stderr
    for key, value in document.get("fsdp_config").items():
        if str(key).removeprefix("fsdp_") not in FSDP_READ and value is not None:
            assert f"fsdp_config.{key}:" in result.stderr, key


def test_fp8_is_named_when_the_json_cannot_carry_it(cli, write, tmp_path):
    config = write("fp8.yaml", "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: fp8\nfsdp_config:\n"
                               "  fsdp_version: 2\n")
    result = cli("convert", str(config), "--to", "deepspeed", "-o", str(tmp_path / "zero.yaml"))
    assert result.exit_code == 0 and "mixed_precision fp8" in result.stderr
    assert '"bf16"' not in (tmp_path / "zero.ds.json").read_text()  # what the note says: nothing carried it


def test_inline_deepspeed_settings_are_named(cli, write, tmp_path):
    config = write("inline.yaml", "distributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\n"
                                  "deepspeed_config:\n  zero_stage: 3\n  deepspeed_multinode_launcher: standard\n"
                                  "  offload_param_device: nvme\n  offload_param_nvme_path: /nvme\n")
    result = cli("convert", str(config), "--to", "fsdp", "-o", str(tmp_path / "fsdp.yaml"))
    assert result.exit_code == 0, result.stderr
    for key in ("deepspeed_multinode_launcher", "offload_param_nvme_path"):
        assert f"deepspeed_config.{key}:" in result.stderr
    assert "deepspeed_config.zero_stage" not in result.stderr  # read: it became fsdp_reshard_after_forward
