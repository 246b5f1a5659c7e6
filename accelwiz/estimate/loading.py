"""The loading phase on the GPU: what is allocated while the model arrives, before the first step.

What a process holds once loaded is the weights the strategy keeps on its GPU (states.py); on the way there
one more piece exists for a moment, depending on how the model is loaded:

* plain `from_pretrained` then `.to(device)` (single GPU, DDP): tensor by tensor, nothing beyond the weights;
* bitsandbytes 4-bit at load (QLoRA): transformers' bnb quantizer moves each 16-bit block linear to the GPU and
  quantizes it there (`Params4bit.to` -> `quantize_4bit`): the largest block linear in 16-bit, beside the
  packed weights so far;
* DeepSpeed ZeRO-1/2: `DeepSpeedZeroOptimizer.__init__` flattens each parameter group into one contiguous
  16-bit buffer while the parameters still exist: from 0.18.7 on the GPU where its free memory holds it (a second
  16-bit copy of the trainable parameters there), before 0.18.7 and where it does not on the CPU (one copy):
  zero_flatten.py decides, by release and GPU;
* DeepSpeed ZeRO-3 (`zero.Init`): parameters are partitioned as they are built; loading the checkpoint gathers
  one module at a time (`GatheredParameters`): the largest module in 16-bit;
* DeepSpeed ZeRO-3 without zero.Init (`under_zero_init`: a YAML's `zero3_init_flag: false` before accelerate
  1.0, a script that loads the model before DeepSpeed's config exists (--no-zero3-init), or a quantized base,
  which transformers builds on the meta device instead and loads onto each GPU): the engine casts every floating
  parameter to its 16-bit dtype and calls `self.module.to(self.device)` before ZeRO-3 partitions anything (0.19.8
  engine.py `_configure_distributed_model`: `if not (self.dont_change_device or is_zero_init_model)`), parameter
  offload included: every GPU holds the whole model once;
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
    from accelwiz.estimate.zero_flatten import ZeroFlatten


def under_zero_init(workload: Workload, strategy: Strategy) -> bool:
    """Whether ZeRO-3 gets a model built under deepspeed.zero.Init: as the strategy's stack says, and never a
    quantized one (transformers 5.25 modeling_utils `get_init_context`: `if not is_quantized` ... zero.Init,
    `elif is_quantized`: the meta device, then the quantizer loads the weights onto the process's GPU)."""
    return strategy.kind == "zero3" and strategy.zero_init and workload.regime != "qlora"


def loading_resident(states: ModelStates) -> float:
    """The weights a process keeps on its GPU once loaded (autocast's copies come later, in forward)."""
    return states.weights - states.autocast_copy


def loading_bytes(workload: Workload, strategy: Strategy, states: ModelStates, flatten: ZeroFlatten | None,
                  gpu_bytes: int | None) -> tuple[float, str]:
    """GPU bytes at the loading phase's peak (resident weights + the loading transient) on a GPU of `gpu_bytes`
    (None: unknown), and a note; ZeRO-1/2's flat copy where `flatten` (zero_flatten.py) puts it."""
    spec = workload.model
    width = workload.compute_width
    resident = loading_resident(states)
    transient, how = 0.0, "from_pretrained, then moved to the GPU tensor by tensor"
    if flatten is not None:
        transient, how = flatten.gpu_bytes(gpu_bytes), flatten.why(gpu_bytes)
    elif strategy.kind == "zero3" and not under_zero_init(workload, strategy):
        return _whole_before_partitioning(workload, strategy)
    elif strategy.kind == "zero3":
        transient = width * spec.largest_layer_parameters
        how = f"zero.Init, {strategy.zero_init_note}; loading gathers one module at a time"
    elif strategy.is_fsdp and strategy.fsdp_wrap == "none":  # one unit (fsdp_wrap.py): the wrap moves all of it
        from accelwiz.estimate.fsdp_reserve import fsdp_root_parameters, fsdp_wrap_cache

        transient = fsdp_wrap_cache(workload, strategy, fsdp_root_parameters(spec))
        how = ("FSDP with the whole model one unit: all of it moved to the GPU unsharded"
               + (" and flattened (FSDP1)" if strategy.fsdp_version == 1 else "") + " before it is sharded")
    elif strategy.is_fsdp:
        transient = width * spec.layer_parameters
        how = "FSDP RAM-efficient loading: one block unsharded on the GPU before it is sharded"
    if workload.regime == "qlora":
        largest = max(t.numel for t in spec.block_linears())
        transient = max(transient, 2 * largest)
        how += "; bitsandbytes quantizes each block linear on the GPU from its 16-bit copy"
    total = resident + transient
    return total, f"loading: {total / 2**30:.2f} GiB on the GPU ({how})"


def _whole_before_partitioning(workload: Workload, strategy: Strategy) -> tuple[float, str]:
    """ZeRO-3 without zero.Init: the whole model on every GPU as the engine casts it (the weights one GPU would
    hold unsharded), before partitioning; a quantized base arrives there linear by linear from 16 bits."""
    from dataclasses import replace

    from accelwiz.estimate.states import model_states

    whole = model_states(workload, replace(strategy, gpus_per_node=1, nodes=1, offload_param="none",
                                           offload_optimizer="none"))
    total = whole.weights - whole.autocast_copy
    if workload.regime == "qlora":
        total += 2 * max(t.numel for t in workload.model.block_linears())
        why = ("a quantized base is never built under zero.Init: bitsandbytes quantizes it onto each GPU, whole, "
               "before ZeRO-3 partitions it")
    else:
        why = (f"not built under zero.Init ({strategy.zero_init_note}): DeepSpeed casts the "
               "whole model to its training dtype and moves it to every GPU (engine `self.module.to(self.device)`) "
               "before ZeRO-3 partitions it; every process also loads the whole model in host RAM")
    return total, f"loading: {total / 2**30:.2f} GiB on the GPU ({why})"
