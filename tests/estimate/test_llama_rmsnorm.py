"""Llama's RMSNorm of transformers 4.28-4.30 (estimate/llama_rmsnorm.py) against what autograd keeps.

The releases' LlamaRMSNorm cannot run on the installed transformers, so each one's forward is run here op for op on
real CPU tensors, as its modeling_llama.py writes it (read in the PyPI wheels of 4.28.1, 4.29.2, 4.30.2 and
4.31.0), followed by a projection that reads its output (as q_proj and gate_proj do). The bytes autograd keeps of
the [b, s, h] tensors (not the weights, not the per-row rsqrt) are compared with the estimator's norm terms: today's
8 bytes an element for 4.31, and what `legacy_norm_bytes` adds for the first releases.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from accelwiz.estimate.activations import layer_activations, tail_bytes  # noqa: E402
from accelwiz.estimate.llama_rmsnorm import legacy_norm_bytes  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.from_config import spec_from_config  # noqa: E402
from accelwiz.resolution.stack import Stack  # noqa: E402

BATCH, SEQ, HIDDEN = 2, 16, 64
LLAMA = {"model_type": "llama", "vocab_size": 512, "hidden_size": HIDDEN, "intermediate_size": 128,
         "num_attention_heads": 4, "num_hidden_layers": 2}
NORM_TERMS = ("norm inputs and outputs", "RMSNorm fp32 upcast", "RMSNorm input kept (Llama before transformers 4.31)")


def _norm(release: str, hidden_states: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """`LlamaRMSNorm.forward` of `release`, eps 1e-6."""
    if release == "4.31.0":
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + 1e-6)
        return weight * hidden_states.to(input_dtype)
    input_dtype = hidden_states.dtype
    variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + 1e-6)
    if release == "4.30.2":
        return (weight * hidden_states).to(input_dtype)
    if weight.dtype in [torch.float16, torch.bfloat16]:  # 4.28.1, 4.29.2
        hidden_states = hidden_states.to(weight.dtype)
    return weight * hidden_states


def _kept(release: str, dtype: torch.dtype, weight_trains: bool) -> int:
    """Bytes of [b, s, h] tensors autograd keeps for one norm and the projection reading its output."""
    x = torch.randn(BATCH, SEQ, HIDDEN, dtype=dtype, requires_grad=True)
    weight = torch.ones(HIDDEN, dtype=dtype, requires_grad=weight_trains)
    projection = torch.randn(HIDDEN, HIDDEN, dtype=dtype, requires_grad=True)
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.numel() == BATCH * SEQ * HIDDEN:  # the projection keeps its input as a [b * s, h] view
            saved[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        (_norm(release, x * 1, weight) @ projection).float().sum().backward()  # x * 1: the residual stream
    return sum(saved.values())


def _workload(release: str, *, precision: str = "mixed", regime: str = "full", family: dict = LLAMA) -> Workload:
    spec = spec_from_config(family, name="tiny", source="test")
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision=precision, attention="sdpa", regime=regime,
                    stack=Stack(transformers=tuple(int(part) for part in release.split("."))))


RELEASES = ("4.28.1", "4.29.2", "4.30.2", "4.31.0")


@pytest.mark.parametrize("release", RELEASES)
def test_full_fine_tuning_norm_terms_match_what_autograd_keeps(release: str) -> None:
    """16-bit stream, trained 16-bit weight (FSDP's MixedPrecision, DeepSpeed, pure bf16): per norm, the
    estimator's norm terms equal the kept bytes of the release's op sequence."""
    terms = dict(layer_activations(_workload(release)).terms)
    per_norm = sum(terms.get(name, 0) for name in NORM_TERMS) // 2  # two norms per Llama block
    assert per_norm == _kept(release, torch.bfloat16, weight_trains=True)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(("dtype", "weight_trains", "regime", "precision"), [
    (torch.bfloat16, False, "lora", "bf16"),  # a frozen 16-bit norm over a 16-bit stream
    (torch.float32, True, "full", "fp32"),  # an fp32 stream: .to(torch.float32) returns the input itself
])
def test_what_the_first_releases_add_matches_autograd(release: str, dtype: torch.dtype, weight_trains: bool,
                                                      regime: str, precision: str) -> None:
    added = _kept(release, dtype, weight_trains) - _kept("4.31.0", dtype, weight_trains)
    workload = _workload(release, precision=precision, regime=regime)
    assert legacy_norm_bytes(workload, fp32_stream=False) * BATCH * SEQ * HIDDEN == added


def test_only_llama_before_4_31_and_the_final_norm_too() -> None:
    mistral = {**LLAMA, "model_type": "mistral", "num_key_value_heads": 4}
    for release, family, expected in (("4.27.0", LLAMA, 0), ("4.28.1", LLAMA, 2), ("4.30.2", LLAMA, 4),
                                      ("4.31.0", LLAMA, 0), ("4.30.2", mistral, 0)):
        workload = _workload(release, family=family)
        assert legacy_norm_bytes(workload, fp32_stream=False) == expected
        assert tail_bytes(workload) - tail_bytes(_workload("4.31.0", family=family)) == \
            expected * BATCH * SEQ * HIDDEN
