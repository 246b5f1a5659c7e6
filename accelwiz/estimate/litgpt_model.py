"""LitGPT's own GPT and training scripts (`--stack litgpt==VERSION`): what they keep beside transformers' model at the
same shapes. Read in the litgpt wheels 0.2.0, 0.4.0, 0.4.5-0.4.9, 0.5.0, 0.5.3, 0.5.5, 0.5.8 and 0.5.13 (model.py,
lora.py, utils.py `chunked_cross_entropy`, finetune/full.py, finetune/lora.py, pretrain.py) and Lightning Fabric's
precision plugins; measured on LitGPT's ops on CPU (tests/estimate/test_litgpt_model.py).

* Grouped-query K and V at every head: `CausalSelfAttention.forward` expands them before SDPA in every release read
  (`k.expand(...)` then `reshape`, copies; from 0.5.5 `repeat_interleave(q_per_kv, dim=1)`), and SDPA keeps the
  copies (activations_gqa.py counts the bytes, `kv_expansion_reason`).
* The attention output: `y.transpose(1, 2).reshape(B, T, C)` feeds `proj`. LitGPT hands SDPA contiguous
  (B, heads, T, d) queries (its reshape copies), so where the kernel's output follows the query's layout (the math
  backend's matmul, eager scores @ v, FlashAttention's `empty_like` of the query) the reshape copies it and `proj`
  keeps the copy: one more query-width tensor a layer. Not under memory-efficient attention, whose output is laid
  out (B, T, heads, d) whatever the query (T4, V100: `attention_backend.sdpa_choice`).
* RMSNorm from 0.4.6 returns `(x_normed * weight.float()).to(dtype)`: where the weight trains (full fine-tuning)
  the product keeps the fp32 normalised tensor for the weight's gradient, 4 B an element where transformers'
  norm keeps a 16-bit one: +2 B per norm element in 16-bit training (fp32 training keeps fp32 in both; LoRA's
  frozen weight keeps nothing more). 0.2.0-0.4.5 cast `x_normed` to the input dtype first, as transformers does.
* LoRA (lora.py `LoRAQKVLinear`) adapts the fused qkv linear once, whichever of q, k and v it enables: one dropout
  and one `lora_A` over the attention input, where PEFT has one per projection (`adapter_view`). Fabric builds the
  adapters in the model's dtype (`fabric.init_module()` under bf16-true), not PEFT's fp32 (`adapters_follow_model`).
* The loss tail: Fabric's `_FabricModule.forward` ends in `precision.convert_output`, which casts the output to
  torch's default dtype (fp32) under every precision plugin, and the loop holds `logits` until backward ends. So
  the fp32 logits (4bsV) stay beside `chunked_cross_entropy`'s fp32 log-softmax of every 128-row chunk (4bsV):
  8bsV kept. Full fine-tuning and pretraining call one LM head: backward's split joins the chunks' gradients into
  one fp32 gradient while they live (+4bsV), and finetune/full.py's shifted slice `logits[..., :-1, :]` is copied
  by the reshape for a batch above one (+4bsV in forward). LoRA's finetune calls the head in 128-token chunks
  (`lm_head_chunk_size=128`): each chunk's gradient is cast and consumed alone (nothing beyond the 8bsV). Under
  16-mixed over an fp32 base each chunk's call casts the frozen head to 16 bits anew (autocast caches only weights
  that require grad) and keeps that copy for its input's gradient: one head copy per 128 tokens where a single call
  keeps one (`head_chunk_copies`).
* The loop holds the previous step: `logits = model(...)` and `loss = ...` are rebound only after the next forward
  returns, so at its end the previous fp32 logits (4bsV) sit beside the new 16-bit logits and their fp32 cast
  (6bsV): 2bsV beyond the kept 8. `loss` holds the previous graph until the next loss is computed: QLoRA on
  bitsandbytes before 0.43.2 keeps each 4-bit linear's input on `ctx` (not a saved tensor, so backward does not
  free it: activations_lora.kept_4bit_input_terms), so the previous step's inputs of every 4-bit linear, the LM
  head's included (Fabric's BitsandbytesPrecision quantizes every nn.Linear), live through the next forward.

Scope: LitGPT's own scripts under Fabric (pretrain.py, finetune/full.py, finetune/lora.py). A LightningModule that
calls litgpt's `LLM` in a Lightning Trainer has no `_FabricModule` and its own loop; its layers are LitGPT's, its
loss tail is not counted here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from accelwiz.resolution.stack import version_text

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# litgpt 0.4.6 (model.py `RMSNorm.forward`): `(x_normed * weight.float()).to(dtype=dtype)`; 0.4.5 casts x_normed first
FP32_NORM_PRODUCT = (0, 4, 6)
_QKV = ("q_proj", "k_proj", "v_proj")
LM_HEAD_CHUNK = 128  # finetune/lora.py: `model(input_ids, lm_head_chunk_size=128)`


def runs_litgpt(workload: Workload) -> bool:
    """The run trains with LitGPT's scripts and GPT module (`--stack litgpt==VERSION`)."""
    return workload.stack.litgpt is not None and workload.model.causal_lm


def _litgpt_block(workload: Workload) -> bool:
    """A Llama-family block (the terms below are written against transformers' gated decoder layer)."""
    return runs_litgpt(workload) and workload.model.gated_decoder


def kv_expansion_reason(workload: Workload) -> str | None:
    """Why LitGPT keeps K and V at every head (activations_gqa.py asks first); None where it does not run."""
    if not _litgpt_block(workload):
        return None
    return f"LitGPT {version_text(workload.stack.litgpt)}'s CausalSelfAttention expands K and V before SDPA"


def _norm_bytes(workload: Workload) -> int:
    """Bytes per norm element beyond transformers' RMSNorm: the fp32 product's input the trained weight keeps."""
    version = workload.stack.litgpt
    if version is None or tuple(version) < FP32_NORM_PRODUCT or workload.regime != "full":
        return 0
    return 0 if workload.compute_width == 4 else 2


def layer_terms(workload: Workload, *, output_in_query_layout: bool) -> list[tuple[str, int]]:
    """What one LitGPT block keeps beyond transformers' layer (activations.layer_activations adds them).
    `output_in_query_layout`: the attention kernel's output follows the query's (B, heads, T, d) layout, so the
    reshape for `proj` copies it (attention_backend.output_in_query_layout)."""
    if not _litgpt_block(workload):
        return []
    spec = workload.model
    sbh = workload.seq_len * workload.micro_batch * spec.hidden_size
    terms = []
    if output_in_query_layout:
        q_elements = workload.seq_len * workload.micro_batch * spec.num_heads * spec.head_dim
        terms.append(("LitGPT: attention output reshaped for proj (a copy)", workload.compute_width * q_elements))
    norm = _norm_bytes(workload)
    if norm:
        terms.append(("LitGPT RMSNorm: fp32 normalised tensor (weight.float())", norm * spec.norms_per_block * sbh))
    return terms


def adapter_view(workload: Workload) -> Workload:
    """LoRA's layer as LitGPT builds it: q, k and v adapted through one fused linear (one input, one dropout)."""
    if not _litgpt_block(workload) or workload.regime == "full":
        return workload
    qkv = [t for t in workload.lora_targets if t in _QKV]
    if len(qkv) < 2:
        return workload
    return replace(workload, lora_targets=tuple(t for t in workload.lora_targets if t not in qkv[1:]))


def adapters_follow_model(workload: Workload) -> bool:
    """Fabric creates LitGPT's adapters in the model's dtype: no fp32 adapters over a 16-bit base."""
    return runs_litgpt(workload)


def head_chunked(workload: Workload) -> bool:
    """finetune/lora.py calls the head in 128-token chunks; full fine-tuning and pretraining call it once."""
    return workload.regime != "full"


def loss_tail(workload: Workload) -> tuple[int, int, int]:
    """(kept through backward, forward transient, backward transient) of Fabric's fp32 logits and LitGPT's chunked
    cross-entropy, with what the loop holds of the previous step (module docstring); Gemma-2's soft-capping keeps
    its tanh output where one head call runs it."""
    spec = workload.model
    tokens = workload.micro_batch * workload.seq_len * spec.vocab_size
    kept = 8 * tokens
    previous = previous_4bit_inputs(workload)
    if head_chunked(workload):
        return kept + head_chunk_copies(workload), previous + 2 * tokens, 0
    if spec.softcapped_logits:
        kept += workload.compute_width * tokens
    shifted_copy = 4 * tokens if workload.micro_batch > 1 else 0  # finetune/full.py's `logits[..., :-1, :]`
    return kept, previous + max(2 * tokens, shifted_copy), 4 * tokens


def head_chunk_copies(workload: Workload) -> int:
    """16-mixed LoRA over an fp32 base: the 16-bit head copies the chunks keep beyond the one a single call keeps."""
    if workload.precision != "mixed" or workload.regime != "lora" or workload.base_dtype != "fp32":
        return 0
    spec = workload.model
    chunks = -(-workload.seq_len // LM_HEAD_CHUNK)
    return (chunks - 1) * 2 * spec.vocab_size * spec.embedding_width


def previous_4bit_inputs(workload: Workload) -> int:
    """The previous step's inputs of every 4-bit linear, held on bitsandbytes' `ctx` (before 0.43.2) while the loop
    holds that step's graph: per layer the attention input, the attention output, the MLP input and its product,
    and the LM head's input, each once in the compute dtype (module docstring)."""
    if workload.regime != "qlora" or not workload.keeps_4bit_inputs:
        return 0
    spec = workload.model
    tokens = workload.micro_batch * workload.seq_len
    per_layer = 2 * spec.hidden_size + spec.num_heads * spec.head_dim + spec.intermediate_size
    return workload.compute_width * tokens * (spec.num_layers * per_layer + spec.hidden_size)


def growth_tail(workload: Workload) -> int:
    """The loss-tail block whose size follows each batch's length (varying_lengths.py): Fabric's fp32 logits."""
    return 4 * workload.micro_batch * workload.seq_len * workload.model.vocab_size


def notes(workload: Workload) -> list[str]:
    """The assumption lines of a LitGPT run (activations.activation_bytes)."""
    if not runs_litgpt(workload):
        return []
    kept, forward, backward = loss_tail(workload)
    head = "the head in 128-token chunks" if head_chunked(workload) else "one head call"
    lines = [f"LitGPT {version_text(workload.stack.litgpt)}'s own GPT: Fabric casts the logits to fp32 and the loop "
             f"holds them beside chunked_cross_entropy's fp32 log-softmax ({kept / 2**20:.0f} MiB kept, {head}; "
             f"+{max(forward, backward) / 2**20:.0f} MiB transient)"]
    if _norm_bytes(workload):
        lines.append("LitGPT's RMSNorm (0.4.6 on) multiplies the weight in fp32: the trained weight's gradient "
                     "keeps the fp32 normalised tensor")
    return lines
