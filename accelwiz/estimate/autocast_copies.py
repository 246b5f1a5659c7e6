"""The 16-bit copies torch.autocast makes of parameters and autograd keeps until backward (measured by the
fake-tensor trace): they count in the weights of a run under autocast over fp32 weights (states.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

_IN_LAYER = re.compile(r"(^|\.)(layers|layer|h)\.\d+\.")
_ATTENTION_INPUTS = ("q_proj", "k_proj", "v_proj", "qkv_proj", "c_attn", "query_key_value", "W_pack", "wqkv")  # fused too


def autocast_cast_parameters(workload: Workload) -> float:
    """Trainable parameters autocast copies to 16-bit and autograd keeps until backward (measured by the trace).

    The copies kept are of the matrices a matmul reads: the linear weights and the LM head (the embedding when
    tied); not the biases (their gradient needs no copy), the input embeddings or the norms. Under gradient
    checkpointing a checkpointed layer's copies are not kept (they are made again when the layer is
    recomputed), only the LM head's.
    """
    spec = workload.model
    if workload.regime != "full":  # the adapters are all linear; all sit inside the checkpointed layers
        if workload.gradient_checkpointing and not workload.legacy_trainer:
            return frozen_cast_parameters(workload) + frozen_layernorm_casts(workload)
        # the first layer's q/k/v read the frozen embedding's output, which needs no gradient: autograd does
        # not keep the copies of their lora_A (r × hidden) that only the input's gradient would need
        unsaved = sum(
            workload.lora_rank * t.shape[1]
            for t in spec.block_linears()
            if t.kind in workload.lora_targets and t.kind in _ATTENTION_INPUTS
            and (spec.gated_decoder or spec.relu_mlp)  # OPT's first layer too (tests/estimate/test_trace_opt.py)
        )
        # the adapters only: a modules_to_save copy is cast as its frozen original was (frozen_cast_parameters:
        # an fp32 LM head's), an embedding's not at all, a 16-bit copy needs no cast (modules_to_save.py)
        return (float(sum(workload.adapter_matrices) - unsaved) + frozen_cast_parameters(workload)
                + frozen_layernorm_casts(workload))
    count = 0
    for t in spec.tensors():
        kind = t.kind.lower()
        if "norm" in kind or kind.startswith("ln") or t.name == "bias":  # a bias's copy is not kept for backward
            continue
        if "embed" in kind or kind in ("wte", "wpe"):
            if spec.tied_lm_head and kind in ("embed_tokens", "wte"):
                count += t.numel  # the tied LM head reads it
            continue
        if workload.gradient_checkpointing and not workload.legacy_trainer and _IN_LAYER.search(t.module):
            continue
        count += t.numel
    if spec.parameters_override is not None:  # a bare count has no shape: the published 2 B/param for all
        return float(spec.parameters_override)
    return float(count)


def frozen_layernorm_casts(workload: Workload) -> float:
    """LoRA under autocast over a 16-bit base, OPT's LayerNorms: autocast runs layer_norm in fp32 and casts the frozen
    16-bit weight and bias anew at each call (its cache keeps casts of leaf tensors that require grad only), and they
    live until backward where the norm's input needs a gradient: every norm but a pre-norm model's first (it reads
    the frozen embedding's output), none in a checkpointed layer. 8 B per hidden element per norm, measured by the
    trace (tests/estimate/test_trace_opt.py); counted in 16-bit parameter units, an fp32 cast as two."""
    spec = workload.model
    if workload.regime == "full" or workload.precision != "mixed" or not spec.relu_mlp or \
            workload.frozen_base_width == 4:
        return 0.0
    checkpointed = workload.gradient_checkpointing and not workload.legacy_trainer
    norms = int(spec.final_norm)  # the final norm reads the last layer's output
    if not checkpointed:
        norms += spec.num_layers * spec.norms_per_block - int(spec.final_norm)  # pre-norm: layer 0's first
    return 2.0 * 2 * spec.hidden_size * norms


def frozen_cast_parameters(workload: Workload) -> float:
    """LoRA/QLoRA over a base loaded in fp32 (TRL's default float32, PEFT's k-bit fp32 upcast) under autocast:
    the frozen matrices a matmul reads whose 16-bit copy autograd keeps for the input's gradient. torch's
    autocast caches only casts of leaf tensors that require grad, so each frozen weight is cast anew and its
    copy is saved by the matmul until backward: every non-quantized block linear (a checkpointed layer's
    are made again in its recompute, not kept) and the LM head (the embedding when tied)."""
    if workload.regime == "full" or workload.precision != "mixed" or workload.frozen_base_width != 4:
        return 0.0
    spec, count = workload.model, 0
    checkpointed = workload.gradient_checkpointing and not workload.legacy_trainer
    for t in spec.tensors():
        kind = t.kind.lower()
        if "norm" in kind or kind.startswith("ln") or t.name == "bias":
            continue
        if "embed" in kind or kind in ("wte", "wpe"):
            if spec.tied_lm_head and kind in ("embed_tokens", "wte"):
                count += t.numel
            continue
        if _IN_LAYER.search(t.module) and (workload.regime == "qlora" or checkpointed):
            continue  # bitsandbytes' 4-bit matmul keeps the packed weight, not a 16-bit copy
        if (spec.gated_decoder and t.module.startswith("layers.0.") and t.kind in _ATTENTION_INPUTS
                and not checkpointed):
            continue  # they read the frozen embedding's output, which needs no gradient: nothing to keep
        count += t.numel
    return float(count)
