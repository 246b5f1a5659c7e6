"""One transformer layer's saved activations by architecture, as named terms (activations.py adds the
attention scores and LoRA's changes, and sums them; its docstring gives the accounting): gated decoders
(Llama family), LayerNorm models (GPT-2, BERT) and ReLU/LayerNorm decoders (OPT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.eager_clamp import opt_probability_bytes
from accelwiz.estimate.llama_rmsnorm import legacy_norm_bytes

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.workload import Workload


def gated_decoder_terms(workload: Workload, *, autocast: bool) -> tuple[list[tuple[str, int]], int]:
    """A gated decoder layer's terms (no attention scores), and the bytes per eager attention score."""
    spec = workload.model
    s, b, h = workload.seq_len, workload.micro_batch, spec.hidden_size
    sbh = s * b * h
    width = workload.compute_width  # bytes per activation element
    scale = width // 2  # the formulas below are written for 16-bit activations
    terms: list[tuple[str, int]] = []
    r, f = spec.kv_ratio, spec.intermediate_size
    q_width = spec.num_heads * spec.head_dim / h  # Gemma-2 and Llama-3.2 heads need not fill h
    norms = spec.norms_per_block
    terms.append(("norm inputs and outputs", int(4 * norms * sbh) * scale))
    terms.append(
        ("q, k, v, attention output", int(sbh * (2 * q_width + 4 * r * q_width + 2 * q_width)) * scale)
    )
    terms.append(
        ("gated MLP (gate, up, act, product)", int(8 * s * b * f * spec.experts_per_token) * scale)
    )
    if spec.shared_expert_intermediate_size:  # Qwen2-MoE/DeepSeek: a gated MLP every token runs (trace: 8 B)
        terms.append(("shared expert MLP", 8 * s * b * spec.shared_expert_intermediate_size * scale))
    if has_head_norms(spec):
        terms.append(("per-head q/k RMSNorm", head_norm_bytes(workload)))
    if width == 2:
        terms.append(("RMSNorm fp32 upcast", 4 * norms * sbh))
    else:  # fp32: the normalised tensor (before the weight) is kept beside input and output (the trace)
        terms.append(("RMSNorm normalised copy", 4 * norms * sbh))
    legacy = legacy_norm_bytes(workload, fp32_stream=fp32_stream(workload, autocast))  # transformers < 4.31
    if legacy:
        terms.append(("RMSNorm input kept (Llama before transformers 4.31)", legacy * norms * sbh))
    # Not in the reference: rotary's products keep cos and sin, [b, s, head_dim] each in the residual stream's dtype
    # (not q or k). The 3 q-widths the trace measured here were grouped-query K and V expanded to every head (at
    # r = 1/4) under the mask the fake trace used to build: activations_gqa.py counts them where a run expands
    cos_width = 4 if width == 4 or fp32_residual(workload, autocast) else 2
    terms.append(("rotary cos, sin", 2 * cos_width * spec.head_dim * s * b))
    if width == 2 and fp32_residual(workload, autocast):  # fp32 normalised outputs, 16-bit casts, fp32 adds
        # measured by the trace: 5 sbh per norm with separate projections, 2 with Phi-3's fused qkv/gate_up
        per_norm = 2 if spec.fused_projections else 5
        terms.append(("autocast fp32 residual stream", per_norm * norms * sbh))
    # fp32 probabilities + their 16-bit cast; in fp32 the probabilities alone (dropout p=0 returns its input)
    score_bytes = 6 if width == 2 else 4
    return terms, score_bytes


def layernorm_terms(workload: Workload, *, autocast: bool) -> tuple[list[tuple[str, int]], int]:
    """A GPT-2/BERT layer's terms (Korthikanti's 34sbh; no attention scores), and the bytes per eager score."""
    spec = workload.model
    sbh = workload.seq_len * workload.micro_batch * spec.hidden_size
    width = workload.compute_width  # bytes per activation element
    scale = width // 2  # the formulas below are written for 16-bit activations
    terms: list[tuple[str, int]] = []
    terms.append(("layer tensors (34sbh, Korthikanti)", 34 * sbh * scale))
    if spec.gelu_new_mlp:
        terms.append(("gelu_new intermediates", 24 * sbh * scale))
    score_bytes = 5 * scale
    if width == 2 and autocast:
        score_bytes = 9
        # measured by the trace on GPT-2: torch.pow is on autocast's fp32 list, so gelu_new's tanh chain after it
        # runs in fp32, with LayerNorm's fp32 in/out and the residual adds 22 sbh (kept for BERT's LayerNorm
        # stream); a GPT-2 config running a fused GELU nets ~0 (tests/estimate/test_gpt2_activation.py: -2 sbh)
        if not spec.gelu_new_replaced:
            terms.append(("autocast fp32 residual stream", 22 * sbh))
    return terms, score_bytes


def relu_layernorm_terms(workload: Workload, *, autocast: bool) -> tuple[list[tuple[str, int]], int]:
    """An OPT layer's terms (no attention scores), and the bytes per eager attention score.

    Read in transformers' modeling_opt.py (`OPTDecoderLayer.forward`, lines 214-256; `OPTAttention.forward`,
    153-181), per token, h = hidden, f = ffn_dim, w = 2 (16-bit) or 4 (fp32) bytes:

    * each nn.LayerNorm keeps its input (and an fp32 mean and rstd per token); autocast runs layer_norm in fp32,
      so it keeps an fp32 input (4h) whatever the stream: the fp32 residual of full fine-tuning, or its own
      upcast of a 16-bit LoRA base's;
    * its output is the input of q/k/v_proj (pre-norm; post-norm: the previous layer's final_layer_norm) and of
      fc1, which keep it (w·h each group); under autocast the output is fp32 and each linear keeps its own
      16-bit cast (3 + 1 casts: +2·2h in full fine-tuning, where every linear trains);
    * q (after `* self.scaling`), k, v and the attention output: SDPA keeps them (flash: and an fp32 log-sum-exp,
      activations.py); eager keeps q, k, v, the probabilities and out_proj's `transpose(1, 2).contiguous()`
      copy (line 93): 4 q-widths either way;
    * ReLU keeps its output, the very tensor fc2 keeps (w·f);
    * `nn.functional.dropout(p=config.dropout)` after self_attn and after fc2 (lines 228, 248): a 1-byte mask
      each (CUDA's fused dropout; trace_dropout.py); the residual adds keep nothing.

    Eager scores: softmax in fp32 (line 89: `dtype=torch.float32`) kept, and its 16-bit cast kept by the matmul
    with v: 6 B per score (fp32 training: 4, the cast is a no-op); older releases upcast less (eager_clamp.py
    `opt_probability_bytes`) and clamp the masked scores. OPT's configs set `attention_dropout` 0.0,
    so no score mask (a config that sets it is not counted). Measured per tensor on the real layer and by the
    fake-tensor trace (tests/estimate/test_trace_opt.py).
    """
    spec = workload.model
    tokens = workload.seq_len * workload.micro_batch
    sbh = tokens * spec.hidden_size
    width = workload.compute_width
    cast = autocast and width == 2  # layer_norm in fp32, the linears in 16-bit
    norms = spec.norms_per_block
    q_width = spec.num_heads * spec.head_dim / spec.hidden_size
    terms = [("LayerNorm inputs", norms * (4 if cast else width) * sbh),
             ("LayerNorm outputs (attention and MLP inputs)", norms * width * sbh)]
    if cast and workload.regime == "full":  # q, k, v and fc1 each cast the fp32 norm output for themselves
        readers = (1 if spec.fused_projections else 3) + 1
        terms.append(("autocast: each linear's own 16-bit cast", (readers - norms) * 2 * sbh))
    terms += [("q, k, v, attention output", int(4 * q_width * width * sbh)),
              ("ReLU output (fc2 reads it)", width * tokens * spec.intermediate_size),
              ("LayerNorm mean and rstd (fp32)", norms * 8 * tokens)]
    if spec.residual_dropout > 0:
        terms.append(("residual dropout masks", 2 * sbh))
    return terms, opt_probability_bytes(workload, autocast=autocast)


def relu_layernorm_tail(workload: Workload, *, autocast: bool, frozen: bool) -> int:
    """What an OPT model keeps outside its layers (the first layer's input is that layer's term).

    `OPTDecoder.forward` (modeling_opt.py lines 372-398) and `OPTForCausalLM.forward` (line 511): a pre-norm
    model's final_layer_norm keeps its input (fp32 under autocast) and its mean and rstd; the LM head keeps its
    input (the final norm's output, or a post-norm model's last layer output), or, with the projection pair,
    project_out keeps it, the head keeps project_out's output and project_in keeps the token embedding's output
    (`embedding_width` each). Under autocast each is the linear's own 16-bit cast. `frozen` (LoRA, the head not
    adapted): the frozen head and projections keep nothing; the final norm still keeps its input.
    """
    spec = workload.model
    tokens = workload.seq_len * workload.micro_batch
    width = workload.compute_width
    cast = autocast and width == 2
    kept = (4 if cast else width) * spec.hidden_size * tokens + 8 * tokens if spec.final_norm else 0
    if frozen:
        return kept
    reader = 2 if cast else width  # the linears' inputs: autocast's casts, else the tensors themselves
    kept += reader * spec.hidden_size * tokens
    if spec.word_embed_proj_dim:
        kept += 2 * reader * spec.embedding_width * tokens
    return kept


def has_head_norms(spec: ModelSpec) -> bool:
    """Qwen3, Gemma-3, OLMo-2...: an RMSNorm over each head's queries and keys (`q_norm`, `k_norm`)."""
    return any(t.kind in ("q_norm", "k_norm") for t in spec.tensors())


def head_norm_bytes(workload: Workload) -> int:
    """What the per-head q/k RMSNorms keep, per layer (measured by the trace against the same model without them:
    Qwen3 vs Llama, Gemma-3 vs Gemma-2, at equal widths).

    Each keeps its fp32 input (the upcast; in fp32 the input itself) and the normalised tensor the weight
    multiplies: 16-bit in HF's Llama-style RMSNorm (4 + 2 B per query/key element), fp32 in fp32 training and in
    Gemma's RMSNorm, which multiplies by `1 + weight` in fp32 (4 + 4); plus the fp32 `rsqrt` per head (4 B).
    """
    spec = workload.model
    tokens = workload.seq_len * workload.micro_batch
    elements = (spec.num_heads + spec.num_kv_heads) * spec.head_dim
    per_element = 8 if workload.precision == "fp32" or spec.fp32_normalised_norm else 6
    return tokens * (per_element * elements + 4 * (spec.num_heads + spec.num_kv_heads))


def fp32_stream(workload: Workload, autocast: bool) -> bool:
    """The residual stream between layers is fp32: `fp32_residual`'s cases, and QLoRA under autocast after PEFT's
    prepare_model_for_kbit_training (its fp32 embedding's output is not cast, fp32 + 16-bit adds stay fp32, the
    fp32 norms keep it, and bitsandbytes' Linear4bit returns its input's dtype: a real prepared NF4 Llama under
    autocast hands each layer, and the LM head's norm, fp32; tests/estimate/test_kbit_fp32_stream.py). What a
    checkpointed layer keeps and what reaches the head are then 4 bytes an element."""
    return fp32_residual(workload, autocast) or (autocast and workload.regime == "qlora" and workload.kbit_prepared)


def fp32_residual(workload: Workload, autocast: bool) -> bool:
    """Autocast over fp32 weights keeps an fp32 residual stream in gated decoders only when the embedding is
    fp32: full fine-tuning; LoRA and QLoRA load their frozen base, embedding included, in 16-bit (the trace
    matrix: Llama-3 LoRA +9% with the term). GPT-2's measured term is mostly gelu_new's pow/tanh chain, which
    autocast runs in fp32 whatever the weights (the trace matrix: GPT-2 LoRA -14% without it), so it stays. A
    post-norm OPT (opt-350m) hands each block the fp32 output of its last LayerNorm, LoRA or not."""
    spec = workload.model
    if not spec.gated_decoder and not spec.relu_mlp:  # the 34sbh lump (layernorm_terms)
        return autocast
    if spec.relu_mlp and not spec.final_norm:  # post-norm OPT: each block ends in autocast's fp32 LayerNorm
        return autocast
    return autocast and workload.regime == "full"  # gated and pre-norm OPT decoders (test_trace_opt.py)
