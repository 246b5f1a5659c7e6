"""An unknown DeepSpeed key is an error exactly where DeepSpeed refuses it: DeepSpeed's own `DeepSpeedConfig`
runs on the same dict (CPU), and accelwiz's blocking finding (AW001) must agree with it; a key DeepSpeed reads
past is AW017's warning."""

from __future__ import annotations

import json

import pytest

from tests.rules.helpers import diagnostics

BASE = {"train_micro_batch_size_per_gpu": 4, "gradient_clipping": 1.0, "zero_optimization": {"stage": 2}}
CASES = {
    "top-level-foreign": {"cuda_visible_devices": "0,1"},
    "top-level-note": {"_comment": "ZeRO-2 for 8 GPUs"},
    "top-level-mapping": {"my_settings": {"x": 1}},
    "zero-unknown": {"zero_optimization": {"stage": 2, "cpu_offload_all": True}},
    "fp16-unknown": {"fp16": {"enabled": True, "dynamic": True}},
    "bf16-unknown": {"bf16": {"enabled": True, "master_weights": "fp32"}},
}


@pytest.fixture(scope="module")
def deepspeed_accepts():
    pytest.importorskip("deepspeed")
    from deepspeed.runtime.config import DeepSpeedConfig

    def accepts(data: dict) -> bool:
        try:
            DeepSpeedConfig(data)
        except Exception:  # noqa: BLE001 - any exception stops the run there
            return False
        return True

    return accepts


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_unknown_key_blocks_exactly_when_deepspeed_refuses_it(deepspeed_accepts, tmp_path, name):
    data = {**BASE, **CASES[name]}
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(data))
    found = {d.code for d in diagnostics(path, select=("AW001", "AW017"))}
    accepted = deepspeed_accepts(json.loads(path.read_text()))
    assert ("AW001" not in found) == accepted
    assert "AW017" not in found or accepted  # a warning only for what DeepSpeed reads past
