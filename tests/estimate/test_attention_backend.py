"""Which kernel SDPA runs, and what its math fallback keeps (attention_backend.py, issue 28).

* the selection table, condition by condition (sdp_utils.cpp's constraints as the module docstring cites them);
* the math backend on real tensors on this CPU (`sdpa_kernel(SDPBackend.MATH)` runs the same composite
  `_scaled_dot_product_attention_math` a GPU falls back to): every tensor autograd saves, inputs included, equals
  the fused count plus `math_bytes`, in bf16 with torch's fp32 upcast (the installed torch), without it (the pre-2.5
  code path, `allow_fp16_bf16_reduction_math_sdp(True)`, against `--stack torch==2.4.1`), and in fp32, with and
  without grouped-query K and V;
* the command line: Llama-3.1-8B in pure bf16 on a V100 keeps the math backend's bytes per layer beside the same run
  on an A100, with the assumption line saying why; an unknown GPU keeps the fused count and says so.
"""

from __future__ import annotations

import json

import pytest

from accelwiz.estimate.activations_gqa import kv_expansion_reason
from accelwiz.estimate.attention_backend import compute_capability, math_bytes, sdpa_backend
from accelwiz.estimate.workload import Workload
from accelwiz.resolution.stack import Stack


@pytest.mark.parametrize(("sm", "dtype", "mask", "head_dim", "gqa", "torch", "backend", "why"), [
    ((9, 0), "bf16", False, 128, True, None, "flash", "flash attention"),
    ((8, 0), "fp16", False, 256, False, (2, 2, 0), "flash", "flash attention"),
    ((7, 0), "bf16", False, 128, False, None, "math", "memory-efficient needs sm80 for bf16"),
    ((7, 5), "bf16", False, 64, False, (2, 5, 1), "math", "flash needs sm80"),
    ((7, 5), "fp16", False, 64, False, None, "efficient", "flash needs sm80"),
    ((7, 5), "fp16", False, 64, False, (2, 1, 0), "flash", "flash attention"),  # FlashAttention 1 ran on sm75
    ((7, 5), "fp16", False, 64, True, None, "math", "takes no enable_gqa"),
    ((9, 0), "fp32", False, 128, True, None, "math", "flash takes fp16/bf16 only"),
    ((9, 0), "fp32", False, 128, False, None, "efficient", "flash takes fp16/bf16 only"),
    ((9, 0), "bf16", True, 128, False, None, "efficient", "flash takes no attn_mask"),
    ((9, 0), "bf16", True, 128, False, (2, 0, 1), "math", "no attn_mask before torch 2.1"),
    ((9, 0), "bf16", False, 320, True, None, "math", "head dim <= 256"),
    ((9, 0), "bf16", False, 320, False, None, "efficient", "head dim <= 256"),
    ((8, 9), "bf16", False, 256, False, (2, 4, 1), "efficient", "does not train head dim 256 on sm86-89"),
    ((8, 9), "bf16", False, 256, True, None, "flash", "flash attention"),  # today's limit: (192, 224]
    ((8, 6), "bf16", False, 208, True, None, "math", "does not train head dim 208 on sm86-89"),
    ((8, 0), "bf16", False, 128, False, (2, 1, 2), "flash", "flash attention"),
    ((8, 9), "fp16", False, 128, False, (2, 1, 2), "efficient", "does not train head dim 128"),
    ((8, 6), "bf16", False, 256, True, (2, 5, 1), "math", "does not train head dim 256"),  # Gemma-3 on an A10G
    ((9, 0), "bf16", False, 128, True, (2, 4, 1), "math", "no enable_gqa before torch 2.5"),
])
def test_the_kernel_sdpa_picks(sm, dtype, mask, head_dim, gqa, torch, backend, why):
    choice = sdpa_backend(sm, dtype, mask=mask, head_dim=head_dim, gqa=gqa, torch=torch)
    assert (choice.backend, why in choice.reason) == (backend, True), choice


@pytest.mark.parametrize(("gpu", "sm"), [
    ("NVIDIA A10G", (8, 6)), ("NVIDIA A100-SXM4-80GB", (8, 0)), ("Tesla T4", (7, 5)), ("Tesla V100-SXM2-32GB", (7, 0)),
    ("NVIDIA H100 80GB HBM3", (9, 0)), ("AMD Instinct MI300X", None), ("Some Accelerator", None), (None, None),
])
def test_the_compute_capability_is_the_gpu_tables(gpu, sm):
    assert compute_capability(gpu) == sm


HEADS, HEAD_DIM, SEQ, BATCH = 8, 16, 40, 2


def _workload(kv: int, precision: str, torch: tuple[int, ...] | None) -> Workload:
    transformers = pytest.importorskip("transformers")
    from accelwiz.modelspec.lookup import spec_from_hf_config

    config = transformers.LlamaConfig(vocab_size=64, hidden_size=HEADS * HEAD_DIM, intermediate_size=256,
                                      num_attention_heads=HEADS, num_key_value_heads=kv, head_dim=HEAD_DIM,
                                      num_hidden_layers=1)
    spec = spec_from_hf_config(config.to_dict(), name="llama-math-tiny", source="test")
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision=precision,  # type: ignore[arg-type]
                    stack=Stack(torch=torch), attention_gpu="Tesla V100-SXM2-32GB")


def _math_saved(kv: int, dtype, *, reduced: bool) -> int:
    """Bytes of every storage autograd saves in one math-backend SDPA call whose q, k, v leave a linear layer."""
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(0)
    x = torch.randn(BATCH, SEQ, HEADS * HEAD_DIM, dtype=dtype, requires_grad=True)
    q, k, v = ((x[..., : heads * HEAD_DIM] * 1.5).view(BATCH, SEQ, heads, HEAD_DIM).transpose(1, 2)
               for heads in (HEADS, kv, kv))
    saved: dict[int, int] = {}

    def pack(tensor):
        saved[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    before = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(reduced)
    try:
        with sdpa_kernel(SDPBackend.MATH), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv < HEADS)
    finally:
        torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(before)
    out.sum().backward()  # what was saved is what backward needs
    return sum(saved.values())


@pytest.mark.parametrize(("precision", "reduced", "torch_version"), [
    ("bf16", False, None), ("bf16", False, (2, 5, 1)), ("bf16", True, (2, 4, 1)), ("fp32", False, None),
])
@pytest.mark.parametrize("kv", [2, HEADS])
def test_the_math_backend_keeps_what_the_formula_counts(kv, precision, reduced, torch_version):
    torch = pytest.importorskip("torch")
    workload = _workload(kv, precision, torch_version)
    # K and V reach SDPA at the KV heads with enable_gqa, or expanded by transformers (repeat_kv) before torch 2.5
    passed = HEADS if kv_expansion_reason(workload) else kv
    width = 4 if precision == "fp32" else 2
    fused = width * (HEADS + 2 * passed) * HEAD_DIM * SEQ * BATCH  # what the fused kernel's count has
    scores, qkv = math_bytes(workload)
    measured = _math_saved(passed, torch.float32 if precision == "fp32" else torch.bfloat16, reduced=reduced)
    assert measured == fused + scores + qkv
    assert scores == (2 if reduced else 4) * HEADS * SEQ * SEQ * BATCH


_ARGV = ["estimate", "--model", "llama-3.1-8b", "--strategy", "single", "--precision", "bf16", "--seq-len", "1024",
         "--micro-batch", "2", "--format", "json"]


def _estimate(cli, *extra: str) -> dict:
    return json.loads(cli(*_ARGV, *extra).stdout)["estimate"]


def _sdpa_notes(estimate: dict) -> list[str]:
    return [note for note in estimate["assumptions"] if note.startswith("SDPA ")]


def test_bf16_on_a_v100_keeps_the_math_backends_probabilities(cli):
    a100, v100 = _estimate(cli, "--system", "1xA100-80GB"), _estimate(cli, "--system", "1xV100-32GB")
    # Llama-3.1-8B, 32 layers of 32 heads of 128 (8 KV heads), torch's fp32 upcast: fp32 probabilities, and fp32
    # q, k, v at every head where the fused kernel kept bf16 q and K/V at the KV heads; no log-sum-exp
    s, b, a, d, kv = 1024, 2, 32, 128, 8
    per_layer = 4 * a * s * s * b + (12 * a - 2 * (a + 2 * kv)) * d * s * b - 4 * a * s * b
    assert v100["phases"]["forward"] - a100["phases"]["forward"] == 32 * per_layer
    (fused,), (math,) = _sdpa_notes(a100), _sdpa_notes(v100)
    assert "flash attention on sm80" in fused
    assert "math kernel on the" in math and "memory-efficient needs sm80 for bf16" in math
    assert f"{4 * a * s * s * b / 2**20:.1f} MiB per layer" in math


def test_an_unknown_gpu_keeps_the_fused_count_and_says_so(cli):
    (note,) = _sdpa_notes(_estimate(cli))
    assert "GPU is unknown" in note
