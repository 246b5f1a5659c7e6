"""Llama's RMSNorm before transformers 4.31: what autograd keeps beyond today's norm, per norm and element.

Since 4.31.0 (modeling_llama.py, `LlamaRMSNorm.forward`) the norm upcasts first and multiplies the fp32 copy:

    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    return self.weight * hidden_states.to(input_dtype)

keeping the fp32 copy (pow's and the product's input), the 16-bit normalised tensor (the weight's gradient) and the
output (the projections'): layer_terms.py's 4 + 2 + 2 bytes. Llama's first releases multiplied the input itself
(read in the PyPI wheels of 4.28.1, 4.29.2, 4.30.2 and 4.31.0):

    4.28.0-4.29.2   variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
                    hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
                    if self.weight.dtype in [torch.float16, torch.bfloat16]:
                        hidden_states = hidden_states.to(self.weight.dtype)
                    return self.weight * hidden_states
    4.30.0-4.30.2   the same two lines, then `return (self.weight * hidden_states).to(input_dtype)`

* `hidden_states * torch.rsqrt(...)`: the rsqrt depends on the input, so both factors need each other for the
  gradient and autograd keeps the 16-bit input beside the fp32 copy `pow` keeps: +2 bytes an element, whatever
  trains (the input requires grad wherever anything upstream trains).
* 4.30 multiplies the 16-bit weight by the fp32 product (type promotion: fp32) and casts after: where the weight
  trains, its gradient keeps the fp32 product instead of 4.28's or 4.31's 16-bit cast: +2 more.

A 16-bit stream only: where the residual stream is fp32 (fp32 training, autocast over fp32 weights, a prepared
QLoRA base) `.to(torch.float32)` returns the input itself and every release keeps the same fp32 tensors.
Measured on the op sequences of the three releases by tests/estimate/test_llama_rmsnorm.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.resolution.stack import version_text

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# the releases [first, end) of Llama's first RMSNorm, and those of them that multiply the weight in fp32
INPUT_KEPT = ((4, 28, 0), (4, 31, 0))
FP32_PRODUCT = ((4, 30, 0), (4, 31, 0))


def _within(version: tuple[int, ...], releases: tuple[tuple[int, int, int], tuple[int, int, int]]) -> bool:
    first, end = releases
    return first <= tuple(version) < end


def legacy_norm_bytes(workload: Workload, *, fp32_stream: bool) -> int:
    """Bytes per element one RMSNorm keeps beyond today's, by the run's transformers (--stack): 0, 2 or 4."""
    version = workload.stack.transformers
    if (workload.model.family != "llama" or version is None or not _within(version, INPUT_KEPT)
            or workload.precision == "fp32" or fp32_stream):
        return 0
    weight_trains = workload.regime == "full"
    return 2 + (2 if weight_trains and _within(version, FP32_PRODUCT) else 0)


def legacy_norm_notes(workload: Workload, *, fp32_stream: bool) -> list[str]:
    """The assumption line for a run whose Llama RMSNorm is the first releases' (none otherwise)."""
    extra = legacy_norm_bytes(workload, fp32_stream=fp32_stream)
    if not extra:
        return []
    version = version_text(workload.stack.transformers)
    product = ", and its trained weight's gradient keeps the fp32 product, not a 16-bit cast" if extra == 4 else ""
    return [f"transformers {version}'s LlamaRMSNorm (until 4.31) multiplies its 16-bit input by the fp32 rsqrt: "
            f"autograd keeps the input beside its fp32 copy{product} (+{extra} B per norm element)"]
