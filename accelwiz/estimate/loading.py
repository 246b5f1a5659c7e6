"""The loading phase on the GPU: what is allocated while the model arrives, before the first step.

What a process holds once loaded is the weights the strategy keeps on its GPU (states.py); on the way there
one more piece exists for a moment, depending on how the model is loaded:

* plain `from_pretrained` then `.to(device)` (single GPU, DDP): tensor by tensor, nothing beyond the weights;
* bitsandbytes 4-bit at load (QLoRA): transformers' bnb quantizer moves each 16-bit block linear to the GPU and
  quantizes it there (`Params4bit.to` -> `quantize_4bit`): the largest block linear in 16-bit, beside the
  packed weights so far;
* DeepSpeed ZeRO-1/2: `DeepSpeedZeroOptimizer.__init__` (runtime/zero/stage_1_and_2.py, 0.19.8) flattens each
  parameter group into one contiguous 16-bit buffer on the GPU *if it fits* (`flatten_on_accelerator`), while
  the parameters still exist: a second 16-bit copy of the trainable parameters (else it flattens on the CPU);
* DeepSpeed ZeRO-3 (`zero.Init`): parameters are partitioned as they are built; loading the checkpoint gathers
  one module at a time (`GatheredParameters`): the largest module in 16-bit;
* FSDP with RAM-efficient loading (`sync_module_states`): each wrapped unit is moved to the GPU unsharded,
  broadcast from rank 0, then sharded: one transformer block unsharded.

Parameter offload (`offload_param`) keeps the weights on the host: only the transient comes to the GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.states import ModelStates
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def loading_bytes(workload: Workload, strategy: Strategy, states: ModelStates) -> tuple[float, str]:
    """GPU bytes at the loading phase's peak (resident weights + the loading transient), and a note."""
    spec = workload.model
    width = 4 if workload.precision == "fp32" else 2
    resident = states.weights - states.autocast_copy
    transient, how = 0.0, "from_pretrained, then moved to the GPU tensor by tensor"
    if strategy.kind in ("zero1", "zero2"):
        transient = width * workload.trainable_parameters
        how = "DeepSpeed flattens the trainable parameters into one 16-bit buffer on the GPU while they exist"
    elif strategy.kind == "zero3":
        transient = width * spec.largest_layer_parameters
        how = "zero.Init: loading gathers one module at a time"
    elif strategy.is_fsdp:
        transient = width * spec.layer_parameters
        how = "FSDP RAM-efficient loading: one block unsharded on the GPU before it is sharded"
    if workload.regime == "qlora":
        largest = max(t.numel for t in spec.block_linears())
        transient = max(transient, 2 * largest)
        how += "; bitsandbytes quantizes each block linear on the GPU from its 16-bit copy"
    total = resident + transient
    return total, f"loading: {total / 2**30:.2f} GiB on the GPU ({how})"
