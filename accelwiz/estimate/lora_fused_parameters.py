"""What LoRA on a fused parameter keeps for backward: the effective weight W + s·B·A, whole.

PEFT wraps a targeted parameter (transformers 5's fused MoE experts, the router's weight: modelspec/peft_moe.py) in
a `ParamWrapper` (peft/tuners/lora/layer.py, 0.22): for its forward it registers a parametrization
(`_LoraFactorsProxy`: `torch.baddbmm(W, lhs, rhs, alpha=scaling)` with autocast off, in W's dtype; a 2D weight
`_LoraParameterProxy`: `W + delta_weight`) inside `parametrize.cached()`. The experts' matmuls then read that
effective weight, which now needs a gradient, so autograd keeps it (under autocast the 16-bit cast of it) for
the weight's gradient: every element of every adapted expert stack, per layer, in the compute width. The base
weight itself is frozen and keeps nothing more; the inputs are kept as in full fine-tuning (MoE layers keep
those terms). Checked against the fake-tensor trace of Qwen2-MoE (trace_matrix.py's LoRA row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload


def fused_parameter_terms(workload: Workload) -> list[tuple[str, int]]:
    """One layer's kept effective weights of the adapted fused parameters (all layers' over the layer count:
    dense and MoE layers averaged); none where PEFT adapts no fused parameter."""
    from accelwiz.modelspec.peft_moe import targeted

    moe = workload.moe_lora_targets
    if moe is None:
        return []
    width = workload.compute_width
    elements = sum(t.numel for t, _ in targeted(workload.model.tensors(), moe))
    kept = width * elements // max(workload.model.num_layers, 1)
    return [("LoRA'd fused experts/router: effective weight W + BA", kept)] if kept else []


def fused_factor_copies(workload: Workload, fp32_adapters: bool) -> float:
    """Bytes of the 16-bit copies of the fused parameters' LoRA factors: `get_delta_factors` casts lhs and rhs to
    the parameter's dtype (`.to(param.dtype)`), and `baddbmm` keeps both for backward. Only fp32 adapters over a
    bf16 base without autocast (PEFT's default in pure bf16: states.peft_fp32_adapters) make a copy: 2 B per
    element of the expert stacks' factors (the fake-tensor trace of Qwen2-MoE in bf16, to the byte); under autocast
    the fp32 adapters' 16-bit copies are counted with every adapter's (states.py)."""
    moe = workload.moe_lora_targets
    if moe is None or not fp32_adapters or workload.precision != "bf16" or workload.gradient_checkpointing:
        return 0.0  # checkpointed: made in each layer's forward and recompute, freed with it (the trace)
    from accelwiz.modelspec.peft_moe import targeted

    # expert stacks only: the router's 2D weight takes `_LoraParameterProxy` (W + delta), no factor copies
    stacks = [(t, factor) for t, factor in targeted(workload.model.tensors(), moe) if len(t.shape) == 3]
    return 2.0 * sum(workload.lora_rank * factor * e * (o + i) for t, factor in stacks for e, o, i in [t.shape])
