"""Model states per GPU: weights, gradients and optimizer states by precision, optimizer, regime, sharding.

Two accountings meet here, and both are right for their runtime:

* DeepSpeed (ZeRO-1/2/3) runs the model in 16-bit and keeps the fp32 master copy inside its optimizer:
  weights 2, gradients 2, optimizer 4 (master) + 8 (Adam m, v) = 16 bytes/param (ZeRO paper §3.1, K = 12).
* torch-native training (single GPU, DDP, FSDP) under autocast keeps the fp32 weights as the model, 16-bit
  copies made by autocast (or FSDP's param_dtype all-gather), fp32 gradients and fp32 Adam states:
  4 + 2 + 4 + 8 = 18 bytes/param (HF "Model training anatomy").

Pure bf16 keeps everything in bf16 (torch optimizers keep states in the parameter dtype): 2 + 2 + 4 = 8.
DeepSpeed never trains pure bf16: with a bf16 model its ZeRO optimizer (stage_1_and_2.py, stage3.py) still
makes an fp32 master partition and steps fp32 Adam states on it (at stage 0 its BF16_Optimizer does the same,
but stage 0 is estimated as DDP here, without DeepSpeed's master copy: not modelled yet)
(`_configure_master_weights` returns float32 unless the JSON's `bf16.bf16_master_weights_and_grads` is set,
and the states stay fp32 unless `bf16.bf16_optimizer_states` is set too), so "bf16" under DeepSpeed is
counted as mixed: 2 + 2 + 12 (`deepspeed_state_widths`). An fp32 model under DeepSpeed gets its separate fp32
master partition too: 4 + 4 + 12.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from accelwiz.estimate.autocast_copies import autocast_cast_parameters
from accelwiz.estimate.deepspeed_step import deepspeed_state_widths
from accelwiz.estimate.frozen_base import (
    frozen_base_width,
    frozen_in_flat_gradient,
    frozen_weight_bytes,
    quant_state_bytes,
    trl_cast_notes,
)
from accelwiz.estimate.lora_fused_parameters import fused_factor_copies
from accelwiz.estimate.modules_to_save import saved_factored_elements, saved_notes, saved_weight_bytes
from accelwiz.estimate.modules_to_save import saved_width as copy_width
from accelwiz.estimate.paged_states import PAGED_OPTIMIZERS, paged_state_bytes
from accelwiz.estimate.strategy import Strategy

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# bitsandbytes 8-bit Adam: one byte for m and one for v, plus an fp32 absmax per 256-element block each (0.50.2
# optim/optimizer.py Optimizer2State.init_state `blocksize = 256`; older releases blocked by 2048).
ADAM8BIT_BYTES_PER_PARAM = 2 + 2 * 4 / 256


@dataclass(frozen=True)
class ModelStates:
    weights: float
    gradients: float
    optimizer_states: float  # in torch's caching allocator (the paged states apart)
    host_offload: float = 0.0  # bytes per node kept in host RAM (or NVMe) by offloading
    autocast_copy: float = 0.0  # part of `weights`: 16-bit copies kept alive through backward
    notes: tuple[str, ...] = ()
    # bitsandbytes' paged optimizer states: CUDA managed memory, outside torch's allocator (`paged_state_bytes`)
    paged: float = 0.0
    # gradients live through a later micro-batch's forward and backward under gradient accumulation
    # (accumulation.py): the step's gradients, or under FSDP's no_sync the whole unsharded gradient
    accumulating: float = 0.0


def peft_fp32_adapters(workload: Workload, strategy: Strategy | None) -> bool:
    """LoRA's A and B in fp32 over a 16-bit base in pure bf16 training. PEFT (>= 0.12; 0.21 installed) upcasts
    them in get_peft_model, whose `autocast_adapter_dtype=True` is the default (tuners_utils.py
    `cast_adapter_dtype`: every fp16/bf16 adapter parameter `.to(torch.float32)`); the built-in trainer, a Trainer
    script and TRL's SFT/DPO/GRPO trainers keep that default outside ZeRO-3, so torch AdamW keeps fp32 states for
    them. Under mixed precision they are fp32 with the rest of the trainable parameters anyway; DeepSpeed casts
    the whole module, adapters included, to the compute dtype (its fp32 masters are counted apart), and TRL asks
    for bf16 adapters under ZeRO-3 (`autocast_adapter_dtype=False`), the same bytes. QLoRA loaded by a Trainer or
    TRL (`kbit_prepared` False): TRL's SFTTrainer casts the adapters of a quantized model to bf16 after
    get_peft_model (trl 1.16 sft_trainer.py), so they stay 2 B there; the built-in trainer's QLoRA keeps fp32."""
    if workload.adapter_dtype is not None:  # the script says
        return workload.adapter_dtype == "fp32" and workload.regime != "full"
    from accelwiz.estimate.litgpt_model import adapters_follow_model

    if adapters_follow_model(workload):  # Fabric builds LitGPT's adapters in the model's dtype
        return False
    if workload.regime == "qlora" and not workload.kbit_prepared:
        return False
    return (workload.regime != "full" and workload.precision == "bf16"
            and not (strategy is not None and strategy.is_deepspeed))


def optimizer_state_bytes(workload: Workload, strategy: Strategy | None = None) -> float:
    """Optimizer states (without any master copy) for the trainable parameters, unsharded: the adapters' (or the
    whole model's) and the copies of PEFT's modules_to_save, each group in its parameters' width (torch keeps a
    state in its parameter's dtype; DeepSpeed steps every trainable parameter on its own master partition)."""
    width = 2 if workload.precision == "bf16" and not peft_fp32_adapters(workload, strategy) else 4
    saved_width = width
    if strategy is not None and strategy.is_deepspeed:  # DeepSpeed's optimizer steps its own master partition
        width = saved_width = deepspeed_state_widths(workload, strategy)[1]
    elif strategy is not None and workload.saved_parameters:
        saved_width = saved_copy_width(workload, strategy)
    own = workload.trainable_parameters - workload.saved_parameters
    return (_group_state_bytes(workload, own, width, _adafactor_elements(workload))
            + _group_state_bytes(workload, workload.saved_parameters, saved_width, saved_factored_elements(workload)))


def _group_state_bytes(workload: Workload, count: int, width: int, factored: float) -> float:
    """One trainable group's optimizer states: `count` parameters in `width` bytes; Adafactor's factored
    second moment over `factored` elements (rows + cols per matrix)."""
    name = workload.optimizer
    if name == "adamw":
        return 2.0 * width * count
    if name == "paged-adamw":  # bnb's 32-bit states are fp32 whatever the parameter (Optimizer2State.init_state)
        return 8.0 * count
    if name in ("adamw8bit", "paged-adamw8bit"):
        return ADAM8BIT_BYTES_PER_PARAM * count
    if name == "sgd":
        return float(width * count)
    return float(width * factored)


def _adafactor_elements(workload: Workload) -> float:
    """Adafactor (HF defaults: no first moment, factored second moment): rows + cols per matrix, n per vector,
    for the adapters (or the whole model)."""
    if workload.regime != "full":
        r = workload.lora_rank
        per_layer = sum(
            (r + t.shape[1]) + (t.shape[0] + r)
            for t in workload.model.block_linears()
            if t.kind in workload.lora_targets
        )
        return float(per_layer * workload.model.num_layers)
    count = sum(sum(t.shape) if len(t.shape) == 2 else t.numel for t in workload.model.tensors())
    return float(workload.model.scaled(count))


def as_the_engine_trains(workload: Workload, strategy: Strategy) -> tuple[Workload, str | None]:
    """The workload's precision as the engine trains it, and why where it differs. accelerate's FSDP with mixed
    precision upcasts a model loaded in 16 bits to fp32 before wrapping it (1.16: FSDP1 in
    `Accelerator.prepare_model`, "we follow DeepSpeed's strategy to hold the parameters in full precision";
    FSDP2 in utils/fsdp_utils.py `fsdp2_prepare_model`, trainable parameters only, not with 4-bit ones), so
    full fine-tuning of a bf16 model under FSDP keeps fp32 parameters, gradients and Adam states: mixed."""
    if workload.precision == "bf16" and strategy.is_fsdp and workload.regime == "full" and strategy.fsdp_upcast:
        return replace(workload, precision="mixed"), (
            "bf16 weights under FSDP: accelerate upcasts them to fp32 before wrapping (mixed_precision != 'no'), "
            "so the shards, gradients and Adam states are fp32 and FSDP gathers them in bf16")
    return workload, None


def saved_copy_width(workload: Workload, strategy: Strategy) -> int:
    """Bytes per parameter of PEFT's modules_to_save copies: their original's as loaded (modules_to_save.py)."""
    return copy_width(workload, strategy, frozen_base_width(workload, strategy))


def trainable_width(workload: Workload, strategy: Strategy) -> int:
    """Bytes per trainable parameter, as its gradient and torch AdamW's states have it: fp32 under autocast
    (the parameters stay fp32 and torch.autocast casts them for the matmuls), else the compute width (DeepSpeed
    casts the model itself and keeps its master copy in the optimizer); PEFT's adapters over a bf16 base are
    fp32 (`peft_fp32_adapters`)."""
    if (workload.precision == "mixed" and not strategy.is_deepspeed) or peft_fp32_adapters(workload, strategy):
        return 4
    return workload.compute_width


def model_states(workload: Workload, strategy: Strategy) -> ModelStates:
    """Unsharded bytes for each state (`_unsharded`), then divided (`_sharded`) or moved to the host
    (`_offloaded`) as the strategy says."""
    return _offloaded(workload, strategy, _sharded(workload, strategy, _unsharded(workload, strategy)))


def _unsharded(workload: Workload, strategy: Strategy) -> ModelStates:
    """Weights, gradients and optimizer states of the whole model on one GPU, by precision and regime; the
    copies of PEFT's modules_to_save in their own width (modules_to_save.py)."""
    saved = workload.saved_parameters
    trainable = workload.trainable_parameters - (0 if strategy.is_deepspeed else saved)
    frozen = workload.model.num_parameters if workload.regime != "full" else 0  # LoRA adapters come on top
    precision, deepspeed = workload.precision, strategy.is_deepspeed
    compute = 4 if precision == "fp32" else 2  # bytes of the weights the matmuls read
    master = _master_width(workload, strategy)
    grad_width = trainable_width(workload, strategy)
    if deepspeed or precision != "mixed":  # the trainable parameters in their dtype (PEFT's fp32 adapters too)
        trainable_weights = (compute if deepspeed else grad_width) * trainable
        autocast = fused_factor_copies(workload, peft_fp32_adapters(workload, strategy) and not deepspeed)
        optimizer_master = master * trainable
    else:  # autocast: fp32 parameters are the model; 16-bit copies are made for the matmuls
        trainable_weights, optimizer_master = 4.0 * trainable, 0.0
        autocast = 2.0 * autocast_cast_parameters(workload) if strategy.kind in ("single", "ddp") else 0.0
    copies = saved_weight_bytes(workload, strategy, saved_copy_width(workload, strategy))  # DeepSpeed: in `trainable`
    weights = trainable_weights + frozen_weight_bytes(workload, strategy, frozen, compute) + autocast + copies
    gradients = float(grad_width * trainable) + copies
    notes: list[str] = trl_cast_notes(workload, strategy, compute)
    if frozen_in_flat_gradient(workload, strategy):
        gradients += grad_width * frozen
        notes.append("FSDP1 with use_orig_params: a unit's flat gradient covers its frozen base too (torch's "
                     "FSDP docs: gradient memory 'equivalent to not freezing those parameters')")
    states_bytes = optimizer_state_bytes(workload, strategy)
    notes.append(
        f"{workload.optimizer} states {states_bytes / max(workload.trainable_parameters, 1):.2f} B/param"
        + (f" + {'fp32' if master == 4 else 'bf16'} master copy {master} B/param in the optimizer"
           if optimizer_master else "")
    )
    notes += saved_notes(workload, saved_copy_width(workload, strategy))
    paged = paged_state_bytes(workload, strategy)
    if paged:
        notes.append(f"bitsandbytes' {workload.optimizer}: {paged / 2**30:.2f} GiB of its states (unsharded) in CUDA "
                     "managed memory (cudaMallocManaged), outside torch's caching allocator: not in "
                     "max_memory_allocated/reserved; resident on the GPU while it has room, paged to host RAM by the "
                     "driver when it has not")
    return ModelStates(weights, gradients, optimizer_master + states_bytes - paged, 0.0, autocast, tuple(notes),
                       paged=paged)


def _master_width(workload: Workload, strategy: Strategy) -> int:
    """Bytes per trainable parameter of the optimizer's master copy: fp32 under mixed precision; DeepSpeed keeps
    one for any model, an fp32 one included (fp32 unless the bf16 options say so)."""
    if strategy.is_deepspeed:
        return deepspeed_state_widths(workload, strategy)[0]
    return 4 if workload.precision == "mixed" else 0


def _sharded(workload: Workload, strategy: Strategy, states: ModelStates) -> ModelStates:
    """The states each GPU holds once the strategy shards them over `shard_degree` GPUs."""
    n, notes, weights = strategy.shard_degree, list(states.notes), states.weights
    optimizer = states.optimizer_states / n if strategy.shards_optimizer else states.optimizer_states
    paged = states.paged / n if strategy.shards_optimizer else states.paged
    gradients = states.gradients / n if strategy.shards_gradients else states.gradients
    if strategy.shards_parameters or strategy.kind == "fsdp_grad_op":
        # bitsandbytes keeps a 4-bit weight's quantization state (the 8-bit absmax per 64 weights and its fp32
        # second level: QuantState, on the Params4bit and the Linear4bit module) outside the module's parameters
        # and buffers: FSDP and ZeRO-3 shard and offload only the packed weight, every rank holds the whole state.
        replicated = quant_state_bytes(workload)
        sharded = weights - states.autocast_copy - replicated
        if strategy.kind == "fsdp_grad_op":
            notes.append("FSDP SHARD_GRAD_OP keeps gathered 16-bit parameters from forward through backward")
        weights = sharded / n + _gathered_16bit(workload, strategy) + replicated
        if replicated and n > 1:
            notes.append(f"QLoRA: bitsandbytes' quantization state ({replicated / 2**30:.2f} GiB) is no parameter: "
                         "every rank holds all of it")
    return replace(states, weights=weights, gradients=gradients, optimizer_states=optimizer, notes=tuple(notes),
                   paged=paged)


def _gathered_16bit(workload: Workload, strategy: Strategy) -> float:
    """FSDP SHARD_GRAD_OP: the parameters stay gathered (16-bit) from forward to backward."""
    if strategy.kind != "fsdp_grad_op":
        return 0.0
    return workload.compute_width * workload.model.num_parameters  # mixed: 16-bit too


def _offloaded(workload: Workload, strategy: Strategy, states: ModelStates) -> ModelStates:
    """What the GPU keeps once optimizer or parameter offload moves states to host memory (per node)."""
    n, notes, host = strategy.shard_degree, list(states.notes), 0.0
    per_node_share = strategy.world_size / strategy.nodes / n  # hybrid: each node holds a full set
    weights, gradients, optimizer = states.weights, states.gradients, states.optimizer_states
    if strategy.offload_optimizer != "none":
        # DeepSpeed keeps a gradient partition in the master's dtype on the host (0.19.8 stage_1_and_2.py
        # `initialize_optimizer_states`, stage3.py: `gradient_dtype = self.fp32_partitioned_groups_flat[0].dtype`:
        # fp32, bf16 under bf16_master_weights_and_grads); FSDP moves its (fp32) gradient shards there
        moved_grads = (_master_width(workload, strategy) * workload.trainable_parameters if strategy.is_deepspeed
                       else gradients * n)
        host += (optimizer * n + moved_grads) * per_node_share
        optimizer = gradients = 0.0  # gradients stream to host memory as they are reduced
        notes.append("optimizer offload: the optimizer step runs on the CPU; gradients are copied to host memory")
    if strategy.offload_param != "none":
        replicated = quant_state_bytes(workload) if strategy.shards_parameters else 0.0  # the quant state stays
        kept = _gathered_16bit(workload, strategy) + replicated
        host += (weights - kept) * n * per_node_share
        weights = kept
        notes.append("parameter offload: parameters live in host memory and are fetched layer by layer")
    return ModelStates(weights, gradients, optimizer, host, states.autocast_copy, tuple(notes), paged=states.paged)
