"""bitsandbytes' paged optimizers (`--optimizer paged-adamw|paged-adamw8bit`; the HF Trainer's `optim`
paged_adamw_32bit, paged_adamw, paged_adamw_8bit): which of their states live in CUDA managed memory, and what the
GPU is judged on when those do not fit.

bitsandbytes 0.50.2 (installed): `Optimizer8bit.get_state_buffer` (optim/optimizer.py) gives a state of a tensor of
1e5 elements or more a buffer from `F.get_paged` (functional.py: `lib.cget_managed_ptr`, cudaMallocManaged) and
registers it with the GlobalPageManager; smaller ones get `torch.zeros_like` on the device. Managed memory is
outside torch's caching allocator: it is in neither max_memory_allocated nor max_memory_reserved, nvidia-smi counts
what is resident, and the driver migrates its pages to host RAM when device allocations need the room (each step
then `prefetch_state`s them back: slower). The 32-bit states are fp32 whatever the parameter's dtype
(`Optimizer2State.init_state`); the 8-bit ones are uint8 with an fp32 absmax per block (a torch tensor). The
update is one kernel in place (`F.optimizer_update_32bit`, `optimizer_update_8bit_blockwise`): no temporary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

# how many bits each paged optimizer's two states keep (bnb 0.50.2 optim/adamw.py PagedAdamW, PagedAdamW8bit)
PAGED_OPTIMIZERS = {"paged-adamw": 32, "paged-adamw8bit": 8}
# get_state_buffer: below this many elements a state is a plain torch tensor, at or above it a paged one
PAGED_MIN_ELEMENTS = 100_000


def paged_state_bytes(workload: Workload, strategy: Strategy) -> float:
    """Unsharded bytes of the optimizer states bitsandbytes' paged optimizers put in CUDA managed memory: the two
    states of every tensor the optimizer steps that has `PAGED_MIN_ELEMENTS` or more (the 8-bit optimizer's
    per-block absmax stays a torch tensor); none on the CPU (bnb falls back to plain tensors there, and under
    optimizer offload the step runs on host tensors)."""
    bits = PAGED_OPTIMIZERS.get(workload.optimizer)
    if bits is None or strategy.device == "cpu" or strategy.offload_optimizer != "none":
        return 0.0
    per_element = 8 if bits == 32 else 2
    if strategy.is_deepspeed or (strategy.is_fsdp and strategy.fsdp_version == 1
                                 and not strategy.fsdp_use_orig_params):
        # the optimizer steps flat partitions (DeepSpeed; FSDP1's FlatParameter): one tensor per group or unit
        return per_element * workload.trainable_parameters
    shards = strategy.shard_degree if strategy.shards_optimizer else 1  # FSDP: each rank steps its shard
    if workload.regime == "full":
        sizes = [t.numel for t in workload.model.tensors()]
        share = sum(n for n in sizes if n / shards >= PAGED_MIN_ELEMENTS) / max(sum(sizes), 1)  # norms stay out
        return per_element * workload.trainable_parameters * share
    return float(per_element * sum(n for n in workload.adapter_matrices if n / shards >= PAGED_MIN_ELEMENTS))
