"""Grouped-query attention's keys and values as the attention kernel keeps them: at the KV heads, or expanded to
every query head (issue 28).

layer_terms.py counts the K and V that attention keeps for backward at the KV heads (`4r` sbh, r = kv/heads).
That holds only where the kernel takes K and V unexpanded. transformers expands them with `repeat_kv`
(`hidden_states[:, :, None].expand(...).reshape(...)`: a copy of a-head width) before the kernel in these cases,
and the kernel keeps the expanded copies:

* eager attention, always (`eager_attention_forward`: `repeat_kv` before both matmuls, which keep the expanded
  key and value);
* SDPA before transformers 4.54 (4.48-4.53 `sdpa_attention_forward`, and `LlamaSdpaAttention` before that: always
  `repeat_kv`); from 4.54 it passes `enable_gqa=True` instead where `use_gqa_in_sdpa(attention_mask, key, value)`
  holds, on CUDA: torch 2.5 or later, no attention mask, and (from 5.13) a head dim up to 256. The
  mask is None where masking_utils can skip it: causal attention with no padded position (an all-ones mask is
  skipped too). Padded batches (`Workload.varying_lengths`: the Trainer's and TRL's collators pad each batch to
  its longest) carry a mask, so their K and V are expanded;
* flash-attention 2 takes K and V at the KV heads (no `repeat_kv`): nothing expands.

Nothing keeps the unexpanded tensors as well: rotary's products save cos and sin (not k), `expand`/`reshape`
save only sizes, and v_proj's output is kept by no one but the kernel. So the expanded pair replaces the
KV-head pair: `2 (a - kv) d sb` elements more per layer (d = head dim), 16-bit or, in fp32 training, 32-bit.
Measured on the real Llama layer on CPU (tests/estimate/test_gqa_expansion.py: the saved tensors of a 2-of-8-KV-head
model equal an 8-of-8 one's with a padding mask and in eager, and are this much smaller without a mask).

LitGPT's own model (`--stack litgpt==VERSION`) expands them in every release (litgpt_model.py). Not modelled
here: remote-code models' attention (ChatGLM2/3 and InternLM2 expand in their own code), packed
sequences whose position_ids make masking_utils build a block mask, and GPUs without SDPA's flash kernel (T4,
V100), where torch answers `enable_gqa` with its math kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# transformers' `use_gqa_in_sdpa` (integrations/sdpa_attention.py) first shipped in 4.54.0; 4.53 repeats always
TRANSFORMERS_GQA_IN_SDPA = (4, 54, 0)
# torch's `scaled_dot_product_attention(..., enable_gqa=)` (2.5); transformers 4.54+ checks it
TORCH_ENABLE_GQA = (2, 5, 0)
# transformers 5.13's `use_gqa_in_sdpa` adds "supported head dims to avoid falling back to the math kernel" (read in
# the 4.53-5.25 wheels: 5.12 lacks it, 5.13 has it)
SDPA_GQA_MAX_HEAD_DIM = 256
TRANSFORMERS_GQA_HEAD_DIM = (5, 13, 0)


def _version(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def kv_expansion_reason(workload: Workload) -> str | None:
    """Why attention keeps K and V expanded to every head in this run, or None where it keeps them at the KV
    heads (no grouped-query attention, flash-attention 2, or SDPA's `enable_gqa` path)."""
    from accelwiz.estimate.litgpt_model import kv_expansion_reason as litgpt_reason

    spec = workload.model
    if not spec.gated_decoder or spec.num_kv_heads >= spec.num_heads:
        return None
    litgpt = litgpt_reason(workload)  # LitGPT's own attention expands them whatever the stack below it
    if litgpt is not None or workload.attention == "flash":
        return litgpt
    if workload.attention == "eager":
        return "eager attention repeats K and V to every head (repeat_kv) before the matmuls that keep them"
    transformers, torch = workload.stack.transformers, workload.stack.torch
    if transformers is not None and transformers < TRANSFORMERS_GQA_IN_SDPA:
        return (f"transformers {_version(transformers)} repeats K and V to every head before SDPA (enable_gqa "
                f"from {_version(TRANSFORMERS_GQA_IN_SDPA)})")
    if torch is not None and torch < TORCH_ENABLE_GQA:
        return (f"torch {_version(torch)} has no SDPA enable_gqa (from {_version(TORCH_ENABLE_GQA)}): "
                "transformers repeats K and V to every head")
    if workload.varying_lengths:
        return ("padded batches carry an attention mask, and transformers passes SDPA enable_gqa only without "
                "one: K and V are repeated to every head")
    if spec.head_dim > SDPA_GQA_MAX_HEAD_DIM and (transformers is None or transformers >= TRANSFORMERS_GQA_HEAD_DIM):
        return (f"head dim {spec.head_dim} > {SDPA_GQA_MAX_HEAD_DIM}: transformers repeats K and V to every "
                "head rather than pass SDPA enable_gqa")
    return None


def expanded_kv_bytes(workload: Workload) -> int:
    """Per layer, what keeping K and V at every head adds over keeping them at the KV heads; 0 where not."""
    if kv_expansion_reason(workload) is None:
        return 0
    spec = workload.model
    width = workload.compute_width  # K and V leave their linears in the activation dtype
    extra_heads = spec.num_heads - spec.num_kv_heads
    return 2 * extra_heads * spec.head_dim * workload.seq_len * workload.micro_batch * width


def expanded_kv_terms(workload: Workload) -> list[tuple[str, int]]:
    """The layer term (activations.layer_activations), none where K and V stay at the KV heads."""
    extra = expanded_kv_bytes(workload)
    return [("K and V expanded to every head", extra)] if extra else []


def expanded_kv_notes(workload: Workload) -> tuple[str, ...]:
    """The assumption line: the bytes per layer and why (activations.activation_bytes)."""
    reason = kv_expansion_reason(workload)
    if reason is None:
        return ()
    spec = workload.model
    return (f"K and V kept at all {spec.num_heads} heads, not the {spec.num_kv_heads} KV heads: "
            f"+{expanded_kv_bytes(workload) / 2**20:.1f} MiB per layer ({reason})",)
