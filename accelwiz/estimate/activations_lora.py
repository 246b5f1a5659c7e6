"""LoRA's saved activations against full fine-tuning's: what the frozen base does not keep and what the adapters
add (`frozen_base_terms`), and what PEFT's `lora_dropout` adds (activations.py's `lora dropout` term).

PEFT's LoRA layer (peft/tuners/lora/layer.py `Linear.forward`, bnb.py `Linear4bit.forward`) computes
`result = base_layer(x) + lora_B(lora_A(dropout(x))) * scaling`, where `dropout` is `nn.Dropout(p)` for
`lora_dropout > 0` and `nn.Identity()` for 0 (`LoraLayer.update_layer`). Per adapted linear, per element of
its input, with dropout:

* the mask: CUDA's fused `native_dropout` keeps its boolean mask for backward (1 B; trace_dropout.py);
* the dropped input, which `lora_A` keeps for its weight gradient, where without dropout it keeps `x` itself.
  A frozen base linear keeps nothing of `x` (a matmul saves its input only for the weight's gradient), so with
  dropout `x` lives on only if another op keeps it: the normalised input of the attention and of the MLP
  (a frozen RMSNorm weight keeps only itself) and the MLP's `act(gate) * up` (the product keeps its factors)
  are then freed; the attention output, which SDPA/flash keep for their own backward, is not (eager attention's
  `transpose(1, 2).contiguous()` copy is).
  LoRA under autocast (fp32 adapters over a 16-bit base) already keeps a copy without dropout: PEFT casts `x`
  to the adapter's dtype (`_cast_input_dtype`) and autocast casts it back to 16-bit for `lora_A`; dropout adds
  only the mask there. bitsandbytes' `Linear4bit` skips that cast under autocast, so QLoRA keeps the 16-bit
  dropped copy.

Not counted: the first layer's attention-input masks (its input comes from the frozen embedding and needs no
gradient, so `native_dropout` keeps no mask there; PEFT-adapted embeddings aside), under one layer's q/k/v masks.
Measured against saved tensors of the real PEFT layer (tests/estimate/test_lora_dropout.py) and the fake-tensor
trace (trace_matrix.py's LoRA-dropout rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.lora_fused_parameters import fused_parameter_terms

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import Tensor
    from accelwiz.estimate.workload import Workload

# Linears that read the same input, by the module's last name: with dropout that input is no longer kept once
# every consumer is adapted (a frozen base keeps nothing). Gated decoders only; GPT-2/BERT's inputs are counted
# as kept (an over-estimate of at most the inputs' size).
_SHARED_INPUT = {
    "q_proj": "attention input", "k_proj": "attention input", "v_proj": "attention input",
    "qkv_proj": "attention input",
    "gate_proj": "mlp input", "up_proj": "mlp input", "gate_up_proj": "mlp input", "w1": "mlp input",
    "w3": "mlp input",
    "down_proj": "mlp product", "w2": "mlp product",
    "o_proj": "attention output",
}
# OPT's (modeling_opt.py): fc2 reads ReLU's output, which ReLU keeps for its own backward, as SDPA keeps its
# output that out_proj reads. Read for OPT only: phi's fc1/fc2 around a GELU group differently.
_RELU_MLP_INPUT = {"q_proj": "attention input", "k_proj": "attention input", "v_proj": "attention input",
                   "fc1": "mlp input", "fc2": "relu output", "out_proj": "attention output"}


def _group(workload: Workload, kind: str) -> str | None:
    """The input group a block linear reads (None: outside every group, as GPT-2's and BERT's names)."""
    return (_RELU_MLP_INPUT if workload.model.relu_mlp else _SHARED_INPUT).get(kind)


def _kept_anyway(workload: Workload, group: str) -> bool:
    """An input another op keeps for its own backward: SDPA's output (o_proj/out_proj read it without a copy;
    eager's `transpose(1, 2).contiguous()` copy is read by the projection only), ReLU's output (fc2's input)."""
    return (group == "attention output" and workload.attention != "eager") or group == "relu output"


def _term_by_term(workload: Workload) -> bool:
    """Dense gated and OPT decoders: the layouts whose frozen base `frozen_base_terms` writes out."""
    spec = workload.model
    return (spec.gated_decoder or spec.relu_mlp) and spec.num_experts <= 1


def _input_features(workload: Workload, tensor: Tensor) -> int:
    # GPT-2's Conv1D stores its weight (in, out); nn.Linear (out, in)
    return tensor.shape[0] if workload.model.conv1d_weights else tensor.shape[1]


def _adapted(workload: Workload) -> list[Tensor]:
    from accelwiz.estimate.workload import ALL_LINEAR

    everything = workload.lora_targets == ALL_LINEAR
    return [t for t in workload.model.block_linears() if everything or t.kind in workload.lora_targets]


def lora_dropout_bytes(workload: Workload, *, autocast: bool = False, fp32_adapters: bool = False) -> int:
    """Bytes one layer keeps for backward because of `lora_dropout > 0` (module docstring); 0 without it.
    `fp32_adapters`: fp32 adapters over a 16-bit base without autocast, whose cast copies (`frozen_base_terms`)
    are what dropout drops: only the masks are added."""
    if workload.regime == "full" or workload.lora_dropout <= 0:
        return 0
    spec = workload.model
    tokens = workload.seq_len * workload.micro_batch
    adapted = _adapted(workload)

    def elements(t: Tensor) -> float:  # a routed expert sees experts_per_token / num_experts of the tokens
        share = spec.experts_per_token / max(spec.num_experts, 1) if ".experts." in t.module else 1.0
        return tokens * _input_features(workload, t) * share

    inputs = sum(elements(t) for t in adapted)
    masks = inputs  # 1 B each
    if workload.regime == "lora" and autocast:  # PEFT's fp32 cast already made the copy (module docstring)
        return int(masks)
    copy = _copy_width(workload, "attention input", autocast=autocast, fp32_adapters=fp32_adapters)
    if _term_by_term(workload) and copy == 4:
        return int(masks)  # the fp32 casts are the copies dropout drops (frozen_base_terms counts them)
    width = workload.compute_width
    freed: dict[str, float] = {}
    for t in adapted:
        group = _group(workload, t.kind)  # GPT-2 and BERT names (c_attn, query...) are in no group
        if group is not None and _kept_anyway(workload, group):
            continue  # SDPA/flash keep their output, which o_proj reads; ReLU its output, which fc2 reads
        if group is not None:
            freed[group] = max(freed.get(group, 0.0), elements(t))
    return int(masks + width * (inputs - sum(freed.values())))


# -- what a frozen base does not keep, what the adapters add --------------------------------------------------


def frozen_base_terms(workload: Workload, *, autocast: bool = False,
                      fp32_adapters: bool = False) -> list[tuple[str, int]]:
    """How one gated-decoder layer's saved activations under LoRA/QLoRA differ from full fine-tuning's terms.

    A frozen weight keeps nothing of its input: `F.linear` saves the input only for the weight's gradient, and
    bitsandbytes' `MatMul4Bit` keeps only the packed weight (`ctx.tensors = (None, B)`; before 0.43.2 the input
    too: `kept_4bit_input_terms`). So, against full fine-tuning (activations.py's terms: every linear's input):

    * each RMSNorm's 16-bit normalised tensor (`weight * x.to(dtype)` keeps it only for the weight's gradient);
    * an input group (the attention input, the MLP input, the MLP's `act(gate) * up`) none of whose linears is
      adapted; with an adapted one, `lora_A` keeps the input itself (PEFT's `dropout` is `nn.Identity` at 0);
      eager attention's `transpose(1, 2).contiguous()` copy that only `o_proj` reads (SDPA keeps its output
      for itself, which `o_proj` reads without a copy);
    * where the adapters cast their input, each adapted linear keeps its own cast of it instead, and the shared
      input is kept by none (`_copy_width`: 16-bit under autocast, fp32 for fp32 adapters without it);
    * `lora_A`'s output (r per token, per adapted linear), which `lora_B` keeps;
    * nothing for SDPA's output: `o_proj` reads it without a copy, and SDPA keeps it anyway; rotary keeps only cos
      and sin, as in full fine-tuning (layer_terms.py). The H200's LoRA streams (tests/fixtures/allocator_streams
      14 and 16: eight q-width 16-bit blocks per layer at the peak, each named above) and the real layers on this
      CPU agree.

    Dense gated decoders only (MoE layers keep the full fine-tuning terms). Measured against every tensor
    autograd saves in the real PEFT layer, LoRA and bitsandbytes QLoRA (tests/estimate/test_lora_frozen_base.py).
    After `prepare_model_for_kbit_training` under autocast the fp32 norms make the MLP's gate, up and act(gate)
    and rotary's cos and sin fp32 (counted; without autocast not measured, not counted). Not counted: the first
    layer, whose input needs no gradient, keeps less.
    """
    spec = workload.model
    if workload.regime == "full":
        return []
    if not _term_by_term(workload):  # MoE: full fine-tuning's terms, and the adapted fused experts' weights
        return fused_parameter_terms(workload)
    tokens = workload.seq_len * workload.micro_batch
    width = workload.compute_width
    adapted = _adapted(workload)
    sbh = tokens * spec.hidden_size
    terms = []  # nn.LayerNorm (OPT) keeps its input whether or not its weight trains, and no normalised tensor
    if not spec.layernorm:
        terms.append(("norm weights frozen: normalised tensors not kept", -width * spec.norms_per_block * sbh))
    terms += _input_group_terms(workload, adapted, autocast=autocast, fp32_adapters=fp32_adapters)
    terms += kept_4bit_input_terms(workload, adapted, autocast=autocast, fp32_adapters=fp32_adapters)
    if autocast and workload.regime == "qlora" and workload.kbit_prepared and width == 2 and spec.gated_decoder:
        # fp32 norm weights make the norms' outputs fp32, and bitsandbytes returns its input's dtype: the MLP's
        # gate, up and act(gate) are fp32 (2 more bytes each), and so are rotary's cos and sin (the tests)
        terms.append(("kbit-prepared: fp32 MLP activations, cos and sin",
                      2 * 3 * spec.intermediate_size * tokens + 2 * 2 * spec.head_dim * tokens))
    adapter_width = 4 if fp32_adapters and not autocast else width  # autocast runs lora_A in 16-bit
    terms.append(("lora_A outputs (lora_B keeps them)", adapter_width * workload.lora_rank * tokens * len(adapted)))
    return [term for term in terms if term[1]]


def _input_group_terms(workload: Workload, adapted: list[Tensor], *, autocast: bool,
                       fp32_adapters: bool) -> list[tuple[str, int]]:
    """Per input group (attention input, MLP input, ...): kept by no frozen linear, or cast by each adapter."""
    tokens = workload.seq_len * workload.micro_batch
    width = workload.compute_width
    inputs: dict[str, int] = {}  # group -> elements per token of its input
    chosen: dict[str, int] = {}  # group -> adapted linears reading it
    for t in workload.model.block_linears():
        group = _group(workload, t.kind)
        if group is not None:
            inputs[group] = _input_features(workload, t)
            chosen[group] = chosen.get(group, 0) + (t in adapted)
    terms: list[tuple[str, int]] = []
    for group, features in inputs.items():
        kept = _kept_anyway(workload, group)
        copy = _copy_width(workload, group, autocast=autocast, fp32_adapters=fp32_adapters)
        if copy:  # one cast per adapted linear; the shared input is kept by none
            own = copy * chosen[group] * features * tokens
            shared = 0 if kept else width * features * tokens
            terms.append((f"{group}: each adapter's own cast of the input", own - shared))
        elif not chosen[group] and not kept:
            terms.append((f"{group}: read by frozen linears only, not kept", -width * features * tokens))
    return terms


def _copy_width(workload: Workload, group: str, *, autocast: bool, fp32_adapters: bool) -> int:
    """Bytes per element of the cast of `group`'s input each adapted linear keeps for itself; 0: none (`lora_A`
    keeps the shared input itself).

    PEFT's LoRA `Linear` casts `x` to the adapters' dtype (`_cast_input_dtype`): fp32 adapters over a 16-bit base
    keep an fp32 copy each (4); under autocast, autocast casts that back to 16-bit for `lora_A`, a new tensor per
    adapter (2). Its bitsandbytes `Linear4bit` skips PEFT's cast while CUDA autocast is on (`requires_conversion
    = not torch.is_autocast_enabled()`), so a 16-bit input reaches `lora_A` unchanged and is shared; but after
    `prepare_model_for_kbit_training` the norms' weights are fp32 and so are the attention and MLP inputs, which
    autocast casts once per adapter (with dropout the dropped copies are these casts: lora_dropout_bytes).
    """
    if autocast:
        if workload.regime == "lora":
            return 2
        kbit = workload.kbit_prepared and workload.lora_dropout <= 0
        return 2 if kbit and group in ("attention input", "mlp input") else 0
    return 4 if fp32_adapters and workload.precision != "fp32" else 0


def projection_pair_bytes(workload: Workload, *, autocast: bool, fp32_adapters: bool) -> int:
    """PEFT's all-linear adapts OPT's project_in and project_out too (nn.Linear outside the blocks; spec.py's
    lora_matrices): each lora_A keeps its input, the token embedding's output (embedding_width) and the last block's
    (or final norm's) output (hidden), as its own cast where the adapters cast (`_copy_width`), and each lora_B keeps
    lora_A's output. The trace of opt-350m all-linear in pure bf16 with fp32 adapters: -2.0 % without this term."""
    from accelwiz.estimate.workload import ALL_LINEAR

    spec = workload.model
    if workload.regime == "full" or not spec.word_embed_proj_dim or workload.lora_targets != ALL_LINEAR:
        return 0
    width = workload.compute_width
    copy = _copy_width(workload, "attention input", autocast=autocast, fp32_adapters=fp32_adapters) or width
    adapter = 4 if fp32_adapters and not autocast else width
    tokens = workload.seq_len * workload.micro_batch
    return tokens * (copy * (spec.embedding_width + spec.hidden_size) + 2 * adapter * workload.lora_rank)


# -- bitsandbytes before 0.43.2: every 4-bit linear keeps its input -------------------------------------------------

# the first bitsandbytes whose Linear4bit computes in an fp32 or bf16 input's own dtype (`set_compute_type`)
_COMPUTE_DTYPE_FOLLOWS_INPUT = (0, 41, 0)


def kept_4bit_input_terms(workload: Workload, adapted: list[Tensor], *, autocast: bool,
                          fp32_adapters: bool) -> list[tuple[str, int]]:
    """QLoRA on bitsandbytes before 0.43.2 (`Workload.keeps_4bit_inputs`, from the resolution's stack): the bytes
    one layer's 4-bit linears keep of their inputs where nothing else keeps them.

    `MatMul4Bit.forward` kept `ctx.tensors = (A, B)` whenever an input needed a gradient (bitsandbytes/autograd/
    _functions.py, 0.41.1 line 523), though backward reads only B (a frozen weight; A's gradient is `grad_output @
    dequantize(B)`). Commit 9e75374 ("fix QLoRA mem bug: delete useless buffered activation",
    bitsandbytes-foundation/bitsandbytes#1270, July 2024) keeps `(None, B)`, first released in 0.43.2.
    A is what `Linear4bit.forward` passes (bitsandbytes/nn/modules.py at 0.41.1, lines 232-252): `x =
    x.to(self.compute_dtype)`. From 0.41.0 `set_compute_type` (lines 211-215) makes the compute dtype an fp32 or
    bf16 input's own, so A is the input itself, shared by the linears reading it (q, k, v; gate, up) and perhaps
    kept by another op already; 0.40.x casts an input of another dtype, a new tensor per linear (the fp32
    activations of a k-bit-prepared model under 16-bit autocast). An fp16 input with another compute dtype is cast
    in every version; the estimator's 16-bit is bf16 and does not count that cast.

    Per input group: nothing where the input is kept anyway (SDPA's output, which o_proj reads without a copy;
    `lora_A` without dropout or cast keeping it), else the input once, in its dtype. One layer's term, so under
    gradient checkpointing it is in the recomputed layer only (activations.recompute_bytes), as 2023's reentrant
    checkpointing has it (forward under no_grad: MatMul4Bit keeps `(None, None)`). Measured against the real PEFT
    layer with a MatMul4Bit that keeps `(A, B)` as 0.41.1 does (tests/estimate/test_bnb_4bit_inputs.py).
    """
    if not workload.keeps_4bit_inputs:
        return []
    tokens = workload.seq_len * workload.micro_batch
    width = workload.compute_width
    kept = 0
    for group, (elements, readers, lora_keeps) in _4bit_input_groups(workload, adapted, autocast=autocast,
                                                                      fp32_adapters=fp32_adapters).items():
        dtype = _4bit_input_width(workload, group, autocast=autocast)
        if dtype != width and workload.stack.bitsandbytes < _COMPUTE_DTYPE_FOLLOWS_INPUT:  # type: ignore[operator]
            kept += width * readers * elements * tokens  # each linear's own cast to the compute dtype
        elif not lora_keeps and not _kept_anyway(workload, group):
            kept += dtype * elements * tokens
    version = ".".join(map(str, workload.stack.bitsandbytes or ()))
    return [(f"bitsandbytes {version}: 4-bit linears keep their inputs", kept)] if kept else []


def _4bit_input_groups(workload: Workload, adapted: list[Tensor], *, autocast: bool,
                       fp32_adapters: bool) -> dict[str, tuple[int, int, bool]]:
    """Per input group: its elements per token, the 4-bit linears reading it, and whether an adapter's `lora_A`
    keeps that very tensor (no dropout, no cast by PEFT or by autocast of an fp32 input)."""
    width = workload.compute_width
    groups: dict[str, tuple[int, int, bool]] = {}
    for t in workload.model.block_linears():
        group = _group(workload, t.kind)
        if group is None:
            continue
        cast = _copy_width(workload, group, autocast=autocast, fp32_adapters=fp32_adapters) or \
            (autocast and _4bit_input_width(workload, group, autocast=autocast) != width)
        _, readers, keeps = groups.get(group, (0, 0, False))
        keeps = keeps or (t in adapted and not cast and workload.lora_dropout <= 0)
        groups[group] = (_input_features(workload, t), readers + 1, keeps)
    return groups


def _4bit_input_width(workload: Workload, group: str, *, autocast: bool) -> int:
    """Bytes per element of `group`'s input as the 4-bit linears receive it: after PEFT's k-bit preparation under
    16-bit autocast the fp32 norms make the attention and MLP inputs fp32, and Linear4bit returns its input's dtype,
    so the MLP's product is fp32 too (`frozen_base_terms`); attention's output is autocast's."""
    width = workload.compute_width
    if autocast and workload.regime == "qlora" and workload.kbit_prepared and group != "attention output":
        return 4
    return width
