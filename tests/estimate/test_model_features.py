"""Model families as features of ModelSpec: the formulas read what a model does (soft-capped logits, norms per
block, an LM head reading the tied embedding...), set once where the spec is built, never the family name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelwiz.modelspec.from_config import spec_from_config
from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.trace import TraceSettings, trace_training_step
from accelwiz.estimate.trace_model import config_from_dict
from accelwiz.errors import UsageError
from accelwiz.estimate.workload import Workload, check_attention, default_attention

TINY_GEMMA2 = {"model_type": "gemma2", "vocab_size": 32000, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32}

# The modules whose formulas must read features: a `family` comparison there is a branch on the name.
FORMULA_MODULES = ("activations.py", "activations_lora.py", "states.py", "memory.py", "workload.py")


def test_a_config_without_soft_capping_has_no_tanh_tail_and_the_trace_agrees() -> None:
    """Gemma-2 with `final_logit_softcapping: null` runs no tanh: 4 B per logit (Llama's), not the family's 6."""
    config = dict(TINY_GEMMA2, final_logit_softcapping=None)
    spec = spec_from_config(dict(config), name="tiny-gemma2-nocap", source="test")
    assert spec.softcapped_logits is False
    workload = Workload(spec, micro_batch=1, seq_len=128, precision="bf16", attention="eager")
    estimate = estimate_memory(workload, Strategy("single"))
    assert estimate.logits == 4 * 128 * 32000
    trace = trace_training_step(config_from_dict(dict(config), source="test"),
                                TraceSettings(micro_batch=1, seq_len=128, precision="bf16", attention="eager"))
    assert estimate.activations + estimate.logits == pytest.approx(trace.activations, rel=0.02)


def test_the_config_default_soft_cap_is_read_from_transformers() -> None:
    """A Gemma-2 config.json that omits the key gets transformers' default 30.0: soft-capped."""
    spec = spec_from_config(dict(TINY_GEMMA2), name="tiny-gemma2", source="test")
    assert spec.softcapped_logits is True
    assert spec.sdpa_refusal and spec.norms_per_block == 4


def test_a_model_class_without_sdpa_defaults_to_eager_and_refuses_sdpa() -> None:
    """gpt-oss's class sets `_supports_sdpa = False` (from_pretrained(attn_implementation="sdpa") raises): read
    from the built class, not from a family list that did not name it."""
    config = {"model_type": "gpt_oss", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "num_local_experts": 4, "num_experts_per_tok": 2}
    spec = spec_from_config(config, name="tiny-gpt-oss", source="test")
    assert default_attention(spec) == "eager"
    with pytest.raises(UsageError, match="GptOssForCausalLM sets `_supports_sdpa = False`"):
        check_attention(spec, "sdpa")
    llama = spec_from_config(dict(config, model_type="llama"), name="tiny-llama", source="test")
    assert default_attention(llama) == "sdpa"


@pytest.mark.parametrize(
    ("name", "softcapped", "causal", "tied_head", "norms", "gated"),
    [
        ("gemma-2-9b", True, True, True, 4, True),
        ("llama-3.1-8b", False, True, False, 2, True),
        ("llama-3.2-1b", False, True, True, 2, True),
        ("bert-base", False, False, False, 2, False),
        ("gpt2", False, True, True, 2, False),
    ],
)
def test_preset_features(name: str, softcapped: bool, causal: bool, tied_head: bool, norms: int,
                         gated: bool) -> None:
    spec = resolve_model(name)
    assert (spec.softcapped_logits, spec.causal_lm, spec.tied_lm_head, spec.norms_per_block, spec.gated_decoder) == (
        softcapped, causal, tied_head, norms, gated)


def test_formulas_do_not_branch_on_the_family_name() -> None:
    root = Path(__file__).resolve().parents[2] / "accelwiz" / "estimate"
    branches = [
        f"{module}:{number}: {line.strip()}"
        for module in FORMULA_MODULES
        for number, line in enumerate((root / module).read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\.family\b", line) and not line.lstrip().startswith("#")
    ]
    assert branches == []
