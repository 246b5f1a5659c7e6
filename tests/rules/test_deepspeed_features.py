"""AW619: DeepSpeed JSON keys newer than the installed DeepSpeed (accelwiz/rules/hardware/deepspeed_features.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.probe.profiles import load_system
from accelwiz.rules.hardware.deepspeed_features import NEWER_KEYS
from tests.rules.helpers import diagnostics

V100 = Path(__file__).resolve().parent.parent / "fixtures" / "systems" / "8xV100-32GB.json"
THREADS = Path(__file__).resolve().parent.parent / "corpus" / "threads"


def with_deepspeed(version: str | None):
    """The 8 x V100 profile (a real `probe --save`) with another DeepSpeed installed."""
    profile = load_system(str(V100))
    return profile.model_copy(update={"packages": {**profile.packages, "deepspeed": version}})


def aw619(path: Path, version: str | None) -> list:
    return [d for d in diagnostics(path, select=("AW619",), system=with_deepspeed(version)) if d.code == "AW619"]


def test_openrlhf_zeropp_keys_on_the_reporters_deepspeed():
    """OpenRLHF#63: the strategy's config always writes the ZeRO++ keys; DeepSpeed 0.9.5 refused all three."""
    config = THREADS / "OpenRLHF-OpenRLHF__63.json"
    found = aw619(config, "0.9.5")
    assert sorted(d.path for d in found) == [("zero_optimization", "zero_hpz_partition_size"),
                                             ("zero_optimization", "zero_quantized_gradients"),
                                             ("zero_optimization", "zero_quantized_weights")]
    assert "needs DeepSpeed >= 0.10.0; 0.9.5 is installed" in found[0].message
    assert found[0].severity.value == "error"
    assert aw619(config, "0.10.0") == []  # the first release with ZeRO++
    assert aw619(config, "0.19.8") == []


@pytest.mark.parametrize("path,release", [(path, release) for path, release, _ in NEWER_KEYS])
def test_each_key_at_its_release_boundary(write, path, release):
    block: dict = {"stage": 3}
    inner = block
    for key in path[1:-1]:
        inner = inner.setdefault(key, {"device": "cpu"})
    inner[path[-1]] = 1 if path[-1] != "zenflow" else {"topk_ratio": 0.05}
    config = write("ds_config.json", json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": block}))
    major, minor, patch = (int(p) for p in release.split("."))
    older = f"{major}.{minor}.{patch - 1}" if patch else f"{major}.{minor - 1}.99"
    assert [d.path for d in aw619(config, older)] == [path]
    assert aw619(config, release) == []


def test_silent_without_a_probe_or_without_deepspeed(write):
    config = write("ds_config.json", '{"zero_optimization": {"stage": 3, "zero_quantized_weights": true}}')
    assert not [d for d in diagnostics(config, select=("AW619",)) if d.code == "AW619"]  # no --system
    assert aw619(config, None) == []  # not installed: AW612's finding, not this one


def test_every_key_is_one_the_installed_deepspeed_accepts():
    """The table names real fields: the installed DeepSpeed (0.19.8) validates each one with its own models."""
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    for path, _, _ in NEWER_KEYS:
        section: dict = {"stage": 3, "offload_optimizer": {"device": "cpu"}}
        value = {"topk_ratio": 0.05} if path[-1] == "zenflow" else (0.5 if path[-1] == "ratio" else 1)
        if len(path) == 3:
            section[path[1]][path[2]] = value
        else:
            section[path[1]] = value if path[-1] not in ("zero_quantized_weights", "zero_quantized_gradients",
                                                          "zero_quantized_nontrainable_weights") else True
        DeepSpeedZeroConfig(**section)  # raises on an unknown or misspelled field (extra="forbid")
