"""TRL's SFTTrainer from 0.7.5 until 0.26 with bf16: after `prepare_model_for_kbit_training` (every parameter that is
no Params4bit made fp32), `peft_module_casting_to_bf16` casts the embedding and the LM head back to bf16 (norms stay
fp32). `--stack trl==X` says the script runs that trainer (resolution/stack.py); the frozen weights the estimate
counts are then what a real prepared NF4 Llama holds after TRL's own function (the installed TRL keeps it, for its
ORPO/CPO trainers, with the body SFT ran from 0.9.3 to 0.25) to the byte."""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("bitsandbytes")
pytest.importorskip("trl")

from accelwiz.estimate.memory import estimate_memory  # noqa: E402
from accelwiz.estimate.strategy import Strategy  # noqa: E402
from accelwiz.estimate.workload import ALL_LINEAR  # noqa: E402
from tests.estimate.test_lora_frozen_base import _model, _workload  # noqa: E402
from accelwiz.resolution.stack import Stack


def _frozen_bytes(model: object) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters() if not p.requires_grad)


def test_the_cast_embedding_and_head_are_bf16_and_the_estimate_counts_them_so() -> None:
    from trl.experimental.utils import peft_module_casting_to_bf16

    prepared = _model("sdpa", "qlora+kbit", "mixed", ALL_LINEAR)
    before = _frozen_bytes(prepared)
    peft_module_casting_to_bf16(prepared)
    names = {name: p.dtype for name, p in prepared.named_parameters() if not p.requires_grad}
    assert all(dtype == torch.bfloat16 for name, dtype in names.items() if "embed_tokens" in name or "lm_head" in name)
    assert all(dtype == torch.float32 for name, dtype in names.items() if "norm" in name)
    saved = before - _frozen_bytes(prepared)

    workload = _workload("sdpa", "qlora+kbit", "mixed", ALL_LINEAR)
    single = Strategy("single")
    old, new = (replace(workload, stack=Stack(trl=version)) for version in ((0, 26, 0), (0, 9, 6)))
    assert new.trl_bf16_cast_parameters == 2 * 512 * 128  # the untied embedding and head of the tiny Llama
    assert estimate_memory(old, single).weights - estimate_memory(new, single).weights == saved
    assert replace(workload, stack=Stack()).trl_bf16_cast_parameters == 0  # no TRL said: the built-in trainer


def test_the_flag_says_it_and_an_installed_trl_does_not(cli) -> None:
    import json

    def weights(*extra: str) -> int:
        out = cli("estimate", "--model", "llama-3.1-8b", "--system", "1xL4", "--qlora", "--precision", "mixed",
                  "--format", "json", *extra)
        return json.loads(out.stdout)["estimate"]["per_gpu_bytes"]["weights"]

    plain, trl_2024, trl_today = weights(), weights("--stack", "trl==0.9.6"), weights("--stack", "trl==0.26.0")
    assert plain == trl_today and plain - trl_2024 == 2 * 1_050_673_152  # 128,256 x 4,096, embedding and head
