"""Activation memory: the tensors autograd saves for backward, per layer, from the architecture.

Accounting in the style of Korthikanti et al. 2022 (arXiv:2205.05198), per transformer layer, in bytes,
with s = sequence length, b = micro-batch, h = hidden size, a = heads, r = kv_heads/heads, f = intermediate
size and 16-bit activations (×2 for fp32 training):

* Llama family (Llama, Mistral, Qwen2, Phi-3, Mixtral, Gemma-2), flash/SDPA attention: `sbh(12 + 4r + 8f/h)`
  (two norm inputs and outputs 8, Q 2, K and V 4r, attention output 2, SwiGLU gate, up, act(gate) and their
  product 8f/h; no dropout), plus 4sbh per RMSNorm because HF's RMSNorm upcasts its input to fp32 and keeps
  it, plus the fp32 log-sum-exp of flash attention `4asb`. A MoE layer runs `experts_per_token` MLPs per
  token.
* GPT-2 and BERT (LayerNorm, GELU MLP, dropout 0.1): Korthikanti's `34sbh`; GPT-2's `gelu_new` is written out
  in Python and saves three more 4h-wide tensors (`+24sbh`).
* OPT (LayerNorm, ReLU MLP, residual dropout; pre- or post-norm, the projection pair): term by term from
  modeling_opt.py, `sbh(16 + 2f/h) + 2sbh` of masks in 16-bit, `+8sbh` under autocast in full fine-tuning
  (fp32 norm inputs, each linear's cast); the tail is the final norm and the projection pair
  (layer_terms.relu_layernorm_terms and relu_layernorm_tail; tests/estimate/test_trace_opt.py).
* Per-head q/k RMSNorm (Qwen3, Gemma-3): fp32 input + normalised copy per query/key element (layer_terms.py);
  Gemma-2/3 have four norms per block; a shared expert (Qwen2-MoE, DeepSeek) is one more gated MLP per token,
  `8sb·f_shared` -- each measured by the trace against the same model without it.
* Eager attention materialises the scores: HF Llama-family eager softmax runs in fp32 and keeps the fp32
  probabilities (4) and their 16-bit cast (2): `6as²b`; GPT-2/BERT keep probabilities, dropout mask and
  dropout output: `5as²b` (Korthikanti). SDPA and flash keep neither.
* Gradient checkpointing (HF, per decoder layer): only each layer's input (`2sbh`) is kept; one layer's full
  activations exist again while it is recomputed during backward (`recompute_bytes`, a backward-phase term).
* LoRA dropout (`lora_dropout > 0`): a 1-byte mask per adapted linear's input element and the dropped input
  `lora_A` keeps, less the inputs only the adapters kept (activations_lora.py).
* The loss tail (measured by the fake-tensor trace, accelwiz/estimate/trace.py): HF's loss upcasts the logits
  and `log_softmax` saves only its fp32 output, so what forward leaves for backward is `4bsV`
  (`logits_bytes`). The 16-bit logits and their fp32 copy (`2bsV + 4bsV`; fp32 training: the `4bsV` logits)
  are a forward transient, and backward's first step adds the loss gradient and the log-softmax gradient
  (`8bsV`) while the saved output still lives (`loss_transient_bytes`). A loss the script computes on the
  16-bit logits itself (`Workload.loss_dtype` "bf16" or "fp16", loss_dtype.py) keeps half: `2bsV`, with `4bsV`
  transients either side. Liger's fused linear cross-entropy (`Workload.loss_kernel` "liger") makes no logits
  tensor: its input gradient, chunk logits and lm_head gradient are fused_loss.py's (`autocast` decides their dtypes).
* QLoRA after PEFT's `prepare_model_for_kbit_training` without autocast (`kbit_fp32_stream`): the embedding, the
  norms and the LM head are fp32 and bitsandbytes returns its input's dtype, so every activation is fp32, as in
  fp32 LoRA (tests/estimate/test_kbit_fp32_stream.py, to the byte on the real prepared layer). Under autocast the
  matmuls read 16 bits but the stream between layers stays fp32 (layer_terms.fp32_stream): a checkpointed layer
  keeps an fp32 input, and the head's input is fp32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.estimate.activations_gqa import expanded_kv_notes, expanded_kv_terms
from accelwiz.estimate.activations_run import adapters_in_fp32, as_activations_run, kbit_fp32_stream
from accelwiz.estimate.attention_backend import backend_notes, math_terms, output_in_query_layout
from accelwiz.estimate.eager_clamp import clamp_note, clamped_score_bytes, clamps_scores
from accelwiz.estimate.litgpt_model import layer_terms as litgpt_terms
from accelwiz.estimate.litgpt_model import loss_tail, runs_litgpt
from accelwiz.estimate.litgpt_model import notes as litgpt_notes
from accelwiz.estimate.llama_rmsnorm import legacy_norm_bytes, legacy_norm_notes
from accelwiz.estimate.layer_terms import (
    fp32_residual,
    fp32_stream,
    gated_decoder_terms,
    layernorm_terms,
    relu_layernorm_tail,
    relu_layernorm_terms,
)

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


@dataclass(frozen=True)
class LayerActivations:
    """Bytes one transformer layer keeps for backward, split into named terms."""

    terms: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(value for _, value in self.terms)


def layer_activations(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None,
                      strategy: Strategy | None = None) -> LayerActivations:
    """One layer's saved activations for `workload` (no checkpointing).

    `fp32_adapters`: LoRA's adapters in fp32 over a 16-bit base (None: as states.peft_fp32_adapters has them
    outside DeepSpeed, PEFT's default in pure bf16); each adapted linear then keeps an fp32 copy of its input.

    `autocast`: torch.autocast over fp32 weights (single GPU, DDP). In full fine-tuning the residual stream then
    stays fp32 (the fp32 embedding's output is not cast), so norms keep fp32 inputs and outputs; LoRA and QLoRA
    load the frozen base (the embedding included) in 16-bit, so their residual stream is 16-bit as without
    autocast (the trace: `trace_model.materialise`). Either way autocast runs softmax in fp32.
    """
    workload = as_activations_run(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy)
    spec = workload.model
    architecture = (gated_decoder_terms if spec.gated_decoder
                    else relu_layernorm_terms if spec.relu_mlp else layernorm_terms)
    terms, score_bytes = architecture(workload, autocast=autocast)
    terms += expanded_kv_terms(workload)  # grouped-query K and V as the kernel keeps them (activations_gqa.py)
    # LitGPT's own block beside transformers' (litgpt_model.py)
    terms += litgpt_terms(workload, output_in_query_layout=output_in_query_layout(workload))
    if workload.regime != "full":  # what the frozen base does not keep, what the adapters add
        terms += _adapter_terms(workload, autocast=autocast, fp32_adapters=fp32_adapters)
    s, b, a = workload.seq_len, workload.micro_batch, workload.model.num_heads
    if workload.attention == "eager":
        terms.append(("attention scores (eager)", score_bytes * a * s * s * b))
        clamped = clamped_score_bytes(workload, autocast=autocast)
        if clamped:
            terms.append(("masked scores the clamp keeps (eager)", clamped * a * s * s * b))
    else:  # a fused kernel's log-sum-exp, or what SDPA's math fallback keeps (attention_backend.py)
        terms += math_terms(workload) or [("attention log-sum-exp (fp32)", 4 * a * s * b)]
    return LayerActivations(tuple(terms))


def _adapter_terms(workload: Workload, *, autocast: bool, fp32_adapters: bool | None) -> list[tuple[str, int]]:
    """LoRA/QLoRA: how the frozen base and the adapters change one layer's terms (activations_lora.py)."""
    from accelwiz.estimate.activations_lora import frozen_base_terms, lora_dropout_bytes
    from accelwiz.estimate.litgpt_model import adapter_view

    workload = adapter_view(workload)  # LitGPT adapts q, k and v through one fused linear
    fp32 = adapters_in_fp32(workload, fp32_adapters)
    terms = frozen_base_terms(workload, autocast=autocast, fp32_adapters=fp32)
    if workload.lora_dropout > 0:
        terms.append(("LoRA dropout masks and dropped inputs",
                      lora_dropout_bytes(workload, autocast=autocast, fp32_adapters=fp32)))
    return terms


def activation_bytes(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None,
                     strategy: Strategy | None = None) -> tuple[int, tuple[str, ...]]:
    """Saved activations of all layers per GPU at the end of forward (without the loss tail), and notes."""
    spec = workload.model
    layer = layer_activations(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy)
    per_term = ", ".join(f"{name} {value / 2**20:.0f} MiB" for name, value in layer.terms)
    notes = [f"activations per layer: {per_term}"]
    if kbit_fp32_stream(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy):
        notes.append("QLoRA after prepare_model_for_kbit_training without autocast: the fp32 embedding, norms and "
                     "LM head keep every activation fp32 (bitsandbytes returns its input's dtype)")
        workload = as_activations_run(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy)
    notes += expanded_kv_notes(workload) + backend_notes(workload)
    if workload.gradient_checkpointing:
        total = spec.num_layers * boundary_bytes(workload, autocast=autocast)
        notes.append("gradient checkpointing: each layer keeps its input; one layer is recomputed at a time")
    else:
        total = spec.num_layers * layer.total
    total += tail_bytes(workload, autocast=autocast, fp32_adapters=fp32_adapters)
    if workload.attention == "eager":
        notes.append("eager attention stores the s×s scores of every layer")
        if clamps_scores(workload):
            notes.append(clamp_note(workload))
    notes += legacy_norm_notes(workload, fp32_stream=fp32_stream(workload, autocast))
    notes += litgpt_notes(workload)
    if workload.regime != "full":
        dropout = (f"lora_dropout {workload.lora_dropout:g}: each adapted linear keeps a mask and its dropped input"
                   if workload.lora_dropout > 0 else "lora_dropout 0")
        notes.append(f"LoRA: frozen linears and norms keep none of their inputs, adapted ones do ({dropout})")
    return total, tuple(notes)


def tail_bytes(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None) -> int:
    """After the last layer: the final norm's saved tensors (the embedding output is the first layer's input).

    HF's RMSNorm keeps its fp32 input, the normalised 16-bit tensor and its output, which the LM head keeps:
    `4 + 2 + 2 = 8sbh` (fp32: `4 + 4`; autocast: fp32 input and normalised output plus the 16-bit cast the LM
    head keeps, `4 + 4 + 2`), measured by the trace. LayerNorm models: embedding and final norm outputs.
    """
    sbh = workload.seq_len * workload.micro_batch * workload.model.hidden_size
    sbh_legacy = legacy_norm_bytes(workload, fp32_stream=fp32_stream(workload, autocast)) * sbh  # llama_rmsnorm.py
    if workload.model.relu_mlp:  # OPT: the final norm, if any, and the projection pair (layer_terms.py)
        from accelwiz.estimate.activations_lora import projection_pair_bytes

        return relu_layernorm_tail(workload, autocast=autocast, frozen=frozen_head(workload)) + \
            projection_pair_bytes(workload, autocast=autocast, fp32_adapters=adapters_in_fp32(workload, fp32_adapters))
    if not workload.model.gated_decoder:
        return 2 * boundary_bytes(workload, autocast=autocast)
    if frozen_head(workload):  # LoRA's frozen norm and LM head keep only the norm's fp32 input (the tests)
        from accelwiz.estimate.modules_to_save import trained_head_input_width  # a saved head keeps its input

        return (4 + trained_head_input_width(workload)) * sbh + sbh_legacy
    if workload.precision == "fp32":
        return 8 * sbh
    return (10 if fp32_residual(workload, autocast) else 8) * sbh + sbh_legacy


def frozen_head(workload: Workload) -> bool:
    """LoRA/QLoRA of a dense gated (or OPT) decoder whose LM head is not adapted: the final RMSNorm's weight is
    frozen (its normalised tensor is not kept) and the head (OPT: and the projection pair) keeps nothing of its
    input."""
    from accelwiz.modelspec.spec import OUTSIDE_BLOCK_TARGETS

    spec = workload.model
    return (workload.regime != "full" and (spec.gated_decoder or spec.relu_mlp) and spec.num_experts <= 1
            and not set(workload.lora_targets) & OUTSIDE_BLOCK_TARGETS)


def boundary_bytes(workload: Workload, *, autocast: bool = False) -> int:
    """One layer's input (the residual stream): what a checkpointed layer keeps."""
    width = 4 if workload.precision == "fp32" or fp32_stream(workload, autocast) else 2
    return width * workload.seq_len * workload.micro_batch * workload.model.hidden_size


def recompute_bytes(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None,
                    strategy: Strategy | None = None) -> int:
    """Gradient checkpointing: one layer's full activations, alive again while backward recomputes it."""
    if not workload.gradient_checkpointing:
        return 0
    return layer_activations(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy).total


def logits_bytes(workload: Workload, *, autocast: bool = False) -> int:
    """The loss tail forward leaves for backward: the fp32 log-softmax output (4bsV).

    For large vocabularies (Llama-3: 128,256; Gemma: 256,000) this and its gradients are often the peak of
    the whole step. Encoder-only BERT has no LM head here. Gemma-2 soft-caps the logits before the loss
    (`logits / cap`, `tanh`, `* cap`: Gemma2ForCausalLM.forward, `final_logit_softcapping`), and tanh keeps its
    output for backward: 2bsV more in 16-bit, 4bsV in fp32 (the trace: 6.2 and 8.3 bsV against Llama's 4.1).
    """
    spec = workload.model
    if not spec.causal_lm:
        return 0
    if workload.loss_kernel == "trl-fused-head":  # no logits: 16 bytes per scored position (trl_fused_head.py)
        from accelwiz.estimate.trl_fused_head import fused_head_kept

        return fused_head_kept(workload)
    if workload.loss_kernel == "liger":  # no logits: the input gradient Liger's forward made (fused_loss.py)
        from accelwiz.estimate.fused_loss import fused_loss_bytes

        return fused_loss_bytes(as_activations_run(workload, autocast=autocast), autocast=autocast).kept
    if runs_litgpt(workload):  # Fabric's fp32 logits beside LitGPT's chunked loss (litgpt_model.py)
        return loss_tail(workload)[0]
    tokens = workload.micro_batch * workload.seq_len * spec.vocab_size
    log_softmax = 2 if workload.loss_dtype in ("bf16", "fp16") else 4  # a 16-bit loss: a 16-bit output
    if spec.softcapped_logits:
        return (log_softmax + workload.compute_width) * tokens
    return log_softmax * tokens


def loss_transient_bytes(workload: Workload, *, autocast: bool = False) -> tuple[int, int]:
    """Short-lived loss tensors on top of `logits_bytes`: (in forward, at the start of backward).

    Forward: the logits (16-bit, 2bsV; fp32 training 4bsV) and their fp32 copy (4bsV, none in fp32) exist
    while log_softmax runs. Backward: the gradients of the loss and of the log-softmax (4bsV each).

    transformers before 4.49 (`Workload.copies_shifted_logits`) upcasts the logits in the model and copies
    them shifted: in forward the fp32 logits and their shifted copy (4bsV each) where today's has the 16-bit
    logits and one fp32 copy (+2bsV; +4bsV in fp32 training). In backward the shift's slice makes a full-size
    fp32 gradient for the unshifted logits, but only after log-softmax's backward has freed the loss's
    gradient: the backward transient stays 8bsV, as today's (measured on the real ops, 4.43's loss code against
    today's ForCausalLMLoss: tests/estimate/test_transformers_version.py). A loop that keeps the model's output
    through backward (Answer.AI's train.py; the HF Trainer drops it when compute_loss returns) keeps its logits
    there too, fp32 before 4.49 and 16-bit today: not counted (Answer.AI's rows on 2024's stack sit 4.0-4.5 bsV
    above the same settings run today on an H200, benchmarks/results/fsdp_streams.json).

    A 16-bit loss (`Workload.loss_dtype` bf16/fp16: nn.CrossEntropyLoss on the shifted 16-bit logits, which a script
    copies: `logits[:, :-1].reshape(...)` of a batch above 1, `[..., :-1, :].contiguous()`): forward the logits
    and the copy (2bsV each), backward the log-softmax's and the input's 16-bit gradients (2bsV each), measured
    on the real loss (tests/estimate/test_loss_dtype.py).
    """
    if not workload.model.causal_lm:
        return 0, 0
    if workload.loss_kernel == "trl-fused-head":  # one tile at a time; backward accumulates (trl_fused_head.py)
        from accelwiz.estimate.trl_fused_head import fused_head_transients

        # its tile, its casts and backward's fp32 accumulators
        return fused_head_transients(as_activations_run(workload, autocast=autocast), autocast=autocast)
    if workload.loss_kernel == "liger":  # chunked logits, the lm_head gradient made in forward (fused_loss.py)
        from accelwiz.estimate.fused_loss import fused_loss_bytes

        fused = fused_loss_bytes(as_activations_run(workload, autocast=autocast), autocast=autocast)
        return fused.forward, fused.backward
    if runs_litgpt(workload):
        return loss_tail(workload)[1:]
    tokens = workload.micro_batch * workload.seq_len * workload.model.vocab_size
    if workload.loss_dtype in ("bf16", "fp16"):  # 16-bit logits, their shifted copy, two 16-bit gradients
        return 4 * tokens, 4 * tokens
    forward = 4 * tokens if workload.precision == "fp32" else 6 * tokens
    if workload.copies_shifted_logits:
        return forward + workload.compute_width * tokens, 8 * tokens
    return forward, 8 * tokens
