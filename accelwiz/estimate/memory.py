"""Training memory per GPU and per node for one workload under one strategy: pure arithmetic, frozen result.

Per GPU = model states (states.py) + activations and logits (activations.py) + communication buffers + a
per-process overhead. Every figure carries the assumptions it rests on (`MemoryEstimate.assumptions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.estimate.activations import activation_bytes, logits_bytes
from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import GIB

# CUDA context + cuBLAS/cuDNN workspaces per process. Heuristic, not a measurement: PyTorch PR #86509 measured
# 287 MB (lazy module loading, the default since CUDA 12.2 / PyTorch 1.13) vs 667 MB (eager) for the bare
# context; HF measured 1343 MB on a V100 stack. Not counted by torch.cuda.max_memory_allocated/reserved.
CUDA_CONTEXT_BYTES = 768 * 2**20
# NCCL communicator buffers per process when there is more than one rank (channels × peers × NCCL_BUFFSIZE).
NCCL_BYTES = 512 * 2**20
# Caching-allocator slack (reserved − allocated): block rounding and fragmentation, as a share of the rest.
ALLOCATOR_SLACK = 0.05
# Host RAM of one training process before any model is loaded (Python, torch, CUDA runtime libraries).
HOST_PROCESS_BYTES = 2 * GIB
# DeepSpeed defaults (runtime/zero/config.py, 0.19.8): buckets are element counts.
REDUCE_BUCKET_ELEMENTS = 500_000_000
PREFETCH_BUCKET_ELEMENTS = 50_000_000
PARAM_PERSISTENCE_THRESHOLD = 100_000
# DeepSpeed NVMe swapping: optimizer swap buffers (buffer_count 4) of one sub-group (sub_group_size 1e9)
# in fp32, parameter swap buffers (buffer_count 5 × buffer_size 1e8) in 16-bit.
NVME_OPTIMIZER_BUFFERS = 4
SUB_GROUP_ELEMENTS = 1_000_000_000
NVME_PARAM_BUFFER_BYTES = 5 * 100_000_000 * 2


@dataclass(frozen=True)
class MemoryEstimate:
    strategy: Strategy
    workload: Workload
    weights: int
    gradients: int
    optimizer_states: int
    activations: int
    logits: int
    buffers: int
    overhead: int
    host_bytes: int  # per node: host RAM for offloaded states or model loading, whichever is larger
    nvme_bytes: int  # per node
    assumptions: tuple[str, ...]

    @property
    def model_states(self) -> int:
        return self.weights + self.gradients + self.optimizer_states

    @property
    def allocated(self) -> int:
        """What `torch.cuda.max_memory_allocated` should show: all but the context and allocator slack."""
        return self.model_states + self.activations + self.logits + self.buffers

    @property
    def per_gpu_total(self) -> int:
        return self.allocated + self.overhead


def estimate_memory(workload: Workload, strategy: Strategy) -> MemoryEstimate:
    """Peak training memory per GPU (bytes) and per node host RAM for `workload` under `strategy`."""
    states = model_states(workload, strategy)
    # torch.autocast over fp32 weights only where the model itself stays fp32 (DeepSpeed and FSDP cast it)
    autocast = workload.precision == "mixed" and strategy.kind in ("single", "ddp")
    activations, activation_notes = activation_bytes(workload, autocast=autocast)
    logits = logits_bytes(workload)
    buffers, buffer_notes = _buffers(workload, strategy)
    allocated = states.weights + states.gradients + states.optimizer_states + activations + logits + buffers
    overhead = (
        CUDA_CONTEXT_BYTES + (NCCL_BYTES if strategy.world_size > 1 else 0) + ALLOCATOR_SLACK * allocated
    )
    host, nvme, host_notes = _host(workload, strategy, states.host_offload)
    assumptions = (
        f"{strategy.label} over {strategy.world_size} GPU(s) ({strategy.nodes} node(s))",
        _numerics(workload),
        *states.notes,
        *activation_notes,
        *((workload.model.activations_note,) if not workload.model.analytic_activations else ()),
        f"logits and loss: 16-bit logits + fp32 upcast + fp32 log-softmax ({workload.micro_batch}×"
        f"{workload.seq_len} tokens × vocab {workload.model.vocab_size:,})"
        if logits
        else "no LM head counted",
        *buffer_notes,
        f"overhead: CUDA context {CUDA_CONTEXT_BYTES / 2**20:.0f} MiB"
        + (f" + NCCL {NCCL_BYTES / 2**20:.0f} MiB" if strategy.world_size > 1 else "")
        + f" + allocator slack {ALLOCATOR_SLACK:.0%}",
        *host_notes,
    )
    return MemoryEstimate(
        strategy,
        workload,
        round(states.weights),
        round(states.gradients),
        round(states.optimizer_states),
        activations,
        logits,
        round(buffers),
        round(overhead),
        round(host),
        round(nvme),
        assumptions,
    )


def _numerics(workload: Workload) -> str:
    regime = {
        "full": "full fine-tuning",
        "lora": f"LoRA r={workload.lora_rank}",
        "qlora": f"QLoRA r={workload.lora_rank}, NF4 base with double quantization (4.127 bits/param)",
    }
    precision = {
        "fp32": "fp32",
        "mixed": "mixed precision (16-bit compute, fp32 master weights)",
        "bf16": "pure bf16 (no fp32 master copy)",
    }
    return (
        f"{regime[workload.regime]}; {workload.trainable_parameters:,} trainable of "
        f"{workload.model.num_parameters:,} parameters; {precision[workload.precision]}"
    )


def _buffers(workload: Workload, strategy: Strategy) -> tuple[float, list[str]]:
    """Communication buckets and gathered parameters that exist on top of the model states."""
    spec, trainable = workload.model, workload.trainable_parameters
    width = 4 if workload.precision == "fp32" else 2
    buffers, notes = 0.0, []
    if strategy.kind == "ddp":
        buffers += 4 * trainable if workload.precision == "mixed" else width * trainable
        notes.append("DDP gradient buckets: a second copy of the gradients (gradient_as_bucket_view=False)")
    elif strategy.kind in ("zero1", "zero2"):
        buffers += width * min(REDUCE_BUCKET_ELEMENTS, trainable)
        notes.append(
            "ZeRO reduce bucket: reduce_bucket_size 5e8 elements (or the trainable count if smaller)"
        )
    elif strategy.kind == "zero3":
        persistent = sum(t.numel for t in spec.tensors() if t.numel <= PARAM_PERSISTENCE_THRESHOLD)
        live = (
            2 * width * spec.largest_layer_parameters
        )  # gathered 16-bit params + grads of the largest module
        buffers += live + width * (
            PREFETCH_BUCKET_ELEMENTS + min(REDUCE_BUCKET_ELEMENTS, trainable) + persistent
        )
        notes.append(
            "ZeRO-3: largest module gathered with its gradient, prefetch bucket 5e7, reduce bucket 5e8, "
            "persistent small parameters (≤1e5 elements) replicated"
        )
    elif strategy.is_fsdp:
        gathered = max(spec.layer_parameters, spec.largest_layer_parameters)
        if strategy.kind != "fsdp_grad_op":
            buffers += 2 * width * gathered  # current unit + the prefetched next one
        buffers += 4 * spec.layer_parameters if workload.regime == "full" else 0  # one unit's unsharded grads
        notes.append(
            "FSDP: one wrapped unit gathered and one prefetched (16-bit); one unit's gradients unsharded"
        )
    if workload.regime == "qlora":
        largest_linear = max(t.numel for t in spec.block_linears())
        buffers += 2 * largest_linear
        notes.append("QLoRA: one block linear dequantized to 16-bit at a time")
    return buffers, notes


def _host(workload: Workload, strategy: Strategy, offloaded: float) -> tuple[float, float, list[str]]:
    """Host RAM per node (loading peak or offloaded states, whichever is larger) and NVMe bytes per node."""
    spec, gpn = workload.model, strategy.gpus_per_node
    load_width = {"fp32": 4, "mixed": 4, "bf16": 2}[workload.precision]
    if workload.regime == "qlora":
        load_width = 1
    if strategy.kind == "zero3":  # zero.Init: each module is created in fp32, then partitioned at once
        loading = gpn * spec.largest_layer_parameters * 4
        load_note = "loading: zero.Init partitions each module as it is created"
    elif strategy.is_fsdp:  # fsdp_cpu_ram_efficient_loading: only local rank 0 materialises the weights
        loading = spec.num_parameters * load_width
        load_note = "loading: FSDP cpu_ram_efficient_loading (one copy per node)"
    else:
        loading = gpn * spec.num_parameters * load_width
        load_note = f"loading: every process materialises the model on the CPU ({load_width} B/param)"
    nvme = 0.0
    if "nvme" in (strategy.offload_optimizer, strategy.offload_param):
        nvme, offloaded = (
            offloaded,
            gpn * NVME_PARAM_BUFFER_BYTES
            + gpn
            * NVME_OPTIMIZER_BUFFERS
            * 4
            * min(SUB_GROUP_ELEMENTS, workload.trainable_parameters // strategy.shard_degree + 1),
        )
    host = max(loading, offloaded) + gpn * HOST_PROCESS_BYTES
    notes = [
        load_note,
        f"host: {HOST_PROCESS_BYTES / GIB:.0f} GiB per process for Python, torch and CUDA libraries",
    ]
    if offloaded:
        notes.append(
            "offloaded states are held in host RAM (pinned)"
            if not nvme
            else "NVMe offload: states on disk, swap buffers in host RAM"
        )
    return host, nvme, notes
