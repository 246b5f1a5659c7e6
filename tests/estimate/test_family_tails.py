"""Gemma-2's soft-capped loss tail: tanh keeps its output, so forward leaves 6 (16-bit) or 8 (fp32) bytes per
logit for backward, not Llama's 4; the analytic estimate against the fake-tensor trace of the real model."""

from __future__ import annotations

import pytest

from accelwiz.modelspec.from_config import spec_from_config
from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.trace import TraceSettings, trace_training_step
from accelwiz.estimate.trace_model import config_from_dict
from accelwiz.estimate.workload import Workload

TINY_GEMMA2 = {"model_type": "gemma2", "vocab_size": 32000, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32}


@pytest.mark.parametrize(("precision", "per_logit"), [("bf16", 6), ("fp32", 8)])
def test_gemma2_softcapped_tail_matches_the_trace(precision: str, per_logit: int) -> None:
    spec = spec_from_config(dict(TINY_GEMMA2), name="tiny-gemma2", source="test")
    workload = Workload(spec, micro_batch=1, seq_len=128, precision=precision, attention="eager")
    estimate = estimate_memory(workload, Strategy("single"))
    assert estimate.logits == per_logit * 128 * 32000
    trace = trace_training_step(config_from_dict(dict(TINY_GEMMA2), source="test"),
                                TraceSettings(micro_batch=1, seq_len=128, precision=precision, attention="eager"))
    assert estimate.activations + estimate.logits == pytest.approx(trace.activations, rel=0.02)
    assert estimate.allocated == pytest.approx(trace.peak, rel=0.02)
