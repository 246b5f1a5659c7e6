"""Eager attention's masked-score clamp in older transformers: one more s×s tensor per layer kept for backward.

OPT from transformers 4.21.0 until 4.49 (modeling_opt.py, `OPTAttention.forward`; 4.31.0 lines 214-218) and Llama
from 4.28.0 (its first release) until 4.31 (modeling_llama.py, `LlamaAttention.forward`) add the causal mask to
the scores and then clamp them:

    attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
    attn_weights = torch.max(
        attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min, device=attn_weights.device)
    )

`torch.max(tensor, tensor)` is `torch.maximum`, whose backward (derivatives.yaml: `at::where(self == other, grad /
2, grad).masked_fill_(self < other, 0)`) needs `self`: autograd keeps the masked scores, beside what softmax and
the matmul with v keep (layer_terms.py's bytes per score). 4.20 had no clamp; Llama 4.31 and OPT 4.49 dropped it
(read in the PyPI wheels of 4.20.0, 4.21.0, 4.28.0, 4.30.2, 4.31.0, 4.48.0 and 4.49.0). XGLM clamps too, but has
no formula here.

The kept tensor has the dtype of the sum: the 16-bit scores plus a mask made in the embedding's dtype
(`_make_causal_mask(input_shape, inputs_embeds.dtype, ...)`): 4 bytes where the embedding is fp32 (fp32 training,
full fine-tuning under autocast, a QLoRA base after PEFT's prepare_model_for_kbit_training under autocast), else 2.
The same releases of OPT upcast the softmax only for fp16 scores (`if attn_weights.dtype == torch.float16:
softmax(..., dtype=torch.float32).to(torch.float16)`, else a softmax in the scores' dtype), and 4.20 never did:
pure bf16 keeps 2 bytes of probabilities there, not today's fp32 softmax and its cast (`opt_probability_bytes`).

Measured on the op sequences of 4.20's, 4.31's and 4.49's OPTAttention by tests/estimate/test_eager_clamp.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

OPT_UPCASTS_FP16_ONLY = (4, 21, 0)  # 4.21 upcast fp16 scores only; 4.20 and before: no upcast
OPT_UPCASTS_ALWAYS = (4, 49, 0)  # eager_attention_forward: softmax(dtype=torch.float32).to(query.dtype)
# model_type -> the transformers releases [first, end) whose eager attention clamps the masked scores
CLAMPING_RELEASES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "opt": ((4, 21, 0), (4, 49, 0)),
    "llama": ((4, 28, 0), (4, 31, 0)),
}


def clamps_scores(workload: Workload) -> bool:
    """The run's transformers (--stack) clamps this model's eager scores with torch.max."""
    releases = CLAMPING_RELEASES.get(workload.model.family)
    version = workload.stack.transformers
    if workload.attention != "eager" or releases is None or version is None:
        return False
    first, end = releases
    return first <= tuple(version) < end


def clamped_score_bytes(workload: Workload, *, autocast: bool) -> int:
    """Bytes per eager attention score the clamp keeps (0 where the run's code has no clamp)."""
    if not clamps_scores(workload):
        return 0
    fp32_embedding = workload.precision == "fp32" or (autocast and (
        workload.regime == "full" or (workload.regime == "qlora" and workload.kbit_prepared)))
    return 4 if fp32_embedding else 2


def clamp_note(workload: Workload) -> str:
    """The assumption line for a run whose eager scores are clamped."""
    version = ".".join(str(part) for part in workload.stack.transformers or ())
    return (f"transformers {version} clamps the masked eager scores (torch.max(scores + mask, finfo.min), until "
            f"{'4.49' if workload.model.family == 'opt' else '4.31'} for {workload.model.family}): autograd keeps "
            "one more s×s tensor per layer")


def opt_probability_bytes(workload: Workload, *, autocast: bool) -> int:
    """Bytes per eager score OPT's softmax and the matmul with v keep, by the run's transformers (--stack).

    fp32: the probabilities (4). Under autocast softmax runs in fp32 and the matmul keeps its 16-bit cast (6)
    whatever the release. Else 16-bit scores: 4.49 and later (or no --stack) upcast always (4 + 2); 4.21-4.48
    upcast fp16 only, so pure bf16 keeps its bf16 probabilities (2; "mixed" without autocast, DeepSpeed's engine,
    is taken as fp16: 6); 4.20 and before never upcast (2)."""
    if workload.precision == "fp32":
        return 4
    version = workload.stack.transformers
    if autocast or version is None or tuple(version) >= OPT_UPCASTS_ALWAYS:
        return 6
    if tuple(version) < OPT_UPCASTS_FP16_ONLY or workload.precision == "bf16":
        return 2
    return 6
