"""The eager score clamp of older transformers (estimate/eager_clamp.py) against what autograd keeps.

transformers 4.31's `OPTAttention.forward` cannot run on the installed transformers, so its score path (lines
206-233 of modeling_opt.py in the 4.31.0 wheel: bmm, mask add, `torch.max` clamp, fp16-only fp32 softmax, dropout
at OPT's attention_dropout 0.0, bmm with v) is run here op for op on real CPU tensors, with and without the clamp
line (4.49 dropped it), and the bytes autograd saves, less q, k and v (other terms), are compared with the
estimator's per-layer score terms for the same shapes at --stack transformers 4.31.0 and 4.49.0.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from accelwiz.estimate.activations import layer_activations  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.from_config import spec_from_config  # noqa: E402
from accelwiz.resolution.stack import Stack  # noqa: E402

BATCH, HEADS, SEQ, HEAD_DIM = 2, 4, 64, 16
OPT = {"model_type": "opt", "vocab_size": 512, "hidden_size": HEADS * HEAD_DIM, "ffn_dim": 4 * HEADS * HEAD_DIM,
       "num_attention_heads": HEADS, "num_hidden_layers": 2, "word_embed_proj_dim": HEADS * HEAD_DIM,
       "do_layer_norm_before": True, "dropout": 0.1, "attention_dropout": 0.0, "activation_function": "relu",
       "max_position_embeddings": 128}
SCORE_TERMS = ("attention scores (eager)", "masked scores the clamp keeps (eager)")


def _opt_score_path(scores_dtype: torch.dtype, mask_dtype: torch.dtype, *, clamp: bool) -> tuple[int, int]:
    """Bytes autograd saves on 4.31's OPT score path, and the bytes of q, k, v among them."""
    q, k, v = (torch.randn(BATCH * HEADS, SEQ, HEAD_DIM, dtype=scores_dtype, requires_grad=True) for _ in "qkv")
    mask = torch.full((SEQ, SEQ), torch.finfo(mask_dtype).min, dtype=mask_dtype).triu(1)[None, None]
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.dim() == 0:  # the clamp's finfo.min (a Python float: a 4-byte tensor), no score
            return tensor
        saved[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        attn_weights = attn_weights.view(BATCH, HEADS, SEQ, SEQ) + mask
        if clamp:
            attn_weights = torch.max(
                attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min, device=attn_weights.device))
        attn_weights = attn_weights.view(BATCH * HEADS, SEQ, SEQ)
        if attn_weights.dtype == torch.float16:
            attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(torch.float16)
        else:
            attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
        attn_probs = torch.nn.functional.dropout(attn_weights, p=0.0, training=True)
        if attn_probs.dtype != v.dtype:  # autocast casts the fp32 probabilities for the matmul with v
            attn_probs = attn_probs.to(v.dtype)
        torch.bmm(attn_probs, v).sum().backward()
    qkv = sum(t.untyped_storage().nbytes() for t in (q, k, v) if t.untyped_storage().data_ptr() in saved)
    return sum(saved.values()), qkv


def _estimated_score_bytes(transformers: str, *, precision: str, autocast: bool) -> int:
    spec = spec_from_config(OPT, name="opt-tiny", source="test")
    version = tuple(int(part) for part in transformers.split("."))
    workload = Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision=precision, attention="eager",
                        stack=Stack(transformers=version))
    terms = layer_activations(workload, autocast=autocast).terms
    return sum(value for name, value in terms if name in SCORE_TERMS)


@pytest.mark.parametrize(("precision", "autocast", "scores", "mask"), [
    ("mixed", False, torch.float16, torch.float16),  # DeepSpeed's fp16 engine: the model halved, no autocast
    ("mixed", True, torch.float16, torch.float32),  # autocast over fp32 weights: the fp32 embedding's fp32 mask
    ("fp32", False, torch.float32, torch.float32),
])
@pytest.mark.parametrize(("transformers", "clamp"), [("4.31.0", True), ("4.49.0", False)])
def test_opt_eager_scores_match_what_autograd_keeps(precision: str, autocast: bool, scores: torch.dtype,
                                                    mask: torch.dtype, transformers: str, clamp: bool) -> None:
    total, qkv = _opt_score_path(scores, mask, clamp=clamp)
    assert _estimated_score_bytes(transformers, precision=precision, autocast=autocast) == total - qkv


def test_the_clamp_is_counted_only_in_the_releases_that_have_it() -> None:
    base = _estimated_score_bytes("4.49.0", precision="mixed", autocast=False)
    assert _estimated_score_bytes("4.31.0", precision="mixed", autocast=False) == base + 2 * BATCH * HEADS * SEQ**2
    assert _estimated_score_bytes("4.20.0", precision="mixed", autocast=False) == base
    assert _estimated_score_bytes("4.21.0", precision="mixed", autocast=False) > base
