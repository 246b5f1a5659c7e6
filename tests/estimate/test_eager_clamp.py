"""The eager attention scores of older transformers' OPT (estimate/eager_clamp.py) against what autograd keeps.

transformers 4.20's, 4.31's and 4.49's OPT attention cannot run on the installed transformers, so each release's
score path is run here op for op on real CPU tensors, as its modeling_opt.py writes it (read in the PyPI wheels):
bmm, the mask add, 4.31's `torch.max` clamp, the softmax (4.20: in the scores' dtype; 4.31: fp32 for fp16 scores
only; 4.49: always fp32, cast back to the query's dtype), dropout at OPT's attention_dropout 0.0 and the bmm with
v. The bytes autograd saves, less q, k and v (other terms), are compared with the estimator's per-layer score
terms for the same shapes at --stack transformers 4.20.0, 4.31.0 and 4.49.0.
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


def _opt_score_path(scores_dtype: torch.dtype, mask_dtype: torch.dtype, release: str) -> tuple[int, int]:
    """Bytes autograd saves on `release`'s OPT score path, and the bytes of q, k, v among them."""
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
        if release == "4.31.0":
            attn_weights = torch.max(
                attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min, device=attn_weights.device))
        attn_weights = attn_weights.view(BATCH * HEADS, SEQ, SEQ)
        if release == "4.49.0":
            attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        elif release == "4.31.0" and attn_weights.dtype == torch.float16:
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


RUNS = [
    ("mixed", False, torch.float16, torch.float16),  # DeepSpeed's fp16 engine: the model halved, no autocast
    ("mixed", True, torch.float16, torch.float32),  # autocast over fp32 weights: the fp32 embedding's fp32 mask
    ("bf16", False, torch.bfloat16, torch.bfloat16),  # pure bf16: 4.31 does not upcast bf16 scores
    ("fp32", False, torch.float32, torch.float32),
]
# 4.20 under autocast is left out: its plain softmax is fp32 only by autocast's policy, not emulated on CPU tensors
CASES = [(release, *run) for release in ("4.20.0", "4.31.0", "4.49.0") for run in RUNS
         if not (release == "4.20.0" and run[1])]


@pytest.mark.parametrize(("release", "precision", "autocast", "scores", "mask"), CASES)
def test_opt_eager_scores_match_what_autograd_keeps(release: str, precision: str, autocast: bool,
                                                    scores: torch.dtype, mask: torch.dtype) -> None:
    total, qkv = _opt_score_path(scores, mask, release)
    assert _estimated_score_bytes(release, precision=precision, autocast=autocast) == total - qkv


@pytest.mark.parametrize(("family", "release", "clamped"), [
    ("opt", "4.20.0", False), ("opt", "4.21.0", True), ("opt", "4.48.0", True), ("opt", "4.49.0", False),
    ("llama", "4.27.0", False), ("llama", "4.28.0", True), ("llama", "4.30.2", True), ("llama", "4.31.0", False),
])
def test_the_clamp_is_counted_only_in_the_releases_that_have_it(family: str, release: str, clamped: bool) -> None:
    config = OPT if family == "opt" else {"model_type": "llama", "vocab_size": 512, "hidden_size": 64,
                                          "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2}
    spec = spec_from_config(config, name=family, source="test")
    workload = Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision="mixed", attention="eager",
                        stack=Stack(transformers=tuple(int(part) for part in release.split("."))))
    terms = dict(layer_activations(workload).terms)
    assert terms.get(SCORE_TERMS[1], 0) == (2 * BATCH * HEADS * SEQ**2 if clamped else 0)
