"""Host RAM per node: model loading or offloaded states (whichever is larger), DeepSpeed's own host buffers,
and each process's runtime; NVMe bytes per node.

Term by term, per node, for `offloaded` = the states that states.py moves to the host (DeepSpeed: fp32
master 4 + Adam m, v 8 + fp32 gradient partition 4 = 16 B per trainable parameter, plus the 16-bit
parameters, 2 B, with parameter offload), divided among the nodes:

* DeepSpeed's host buffers on top of those states, read in deepspeed/runtime/zero (0.19.8) and counted on a
  real ZeRO run (tests/estimate/test_host.py inspects a DeepSpeedCPUAdam engine on CPU):
  - ZeRO-3 + optimizer offload: `grad_partitions_flat_buffer` (stage3.py `_setup_for_real_optimizer`), one
    more gradient partition in the gradient-accumulation dtype (the model dtype unless `data_types`
    says otherwise: 2 B/param in bf16/fp16, 4 in fp32), on the host because the optimizer's device is the
    CPU. ZeRO-3 + optimizer offload therefore holds 18 B/param (bf16), not the 16 its estimator counts.
  - ZeRO-1/2 + optimizer offload: `temp_grad_buffer_for_cpu_offload` (stage_1_and_2.py), one buffer of the
    largest parameter's size in the model dtype per process.
  - fp32 training (no bf16/fp16 section): the CPU optimizer still clones its own fp32 partition
    (`fp32_partitioned_groups_flat`, `single_partition_of_fp32_groups`) while the GPU keeps the fp32
    parameters; states.py counts no master copy for fp32, so it is added here (4 B/param).
* loading: every process materialises the model on the CPU (DDP, ZeRO-1/2), FSDP's cpu_ram_efficient_loading
  one copy per node, ZeRO-3's zero.Init one module at a time (ZeRO-3 without zero.Init: every process, as DDP;
  loading.py `under_zero_init`);
* the runtime of each process (Python, torch, CUDA libraries): HOST_PROCESS_BYTES.

DeepSpeed's estimators (`estimate_zero2/3_model_states_mem_needs`) count the 16 (18 with parameter offload)
B/param and multiply by `additional_buffer_factor` = 1.5, a margin they do not break down; accelwiz counts the
buffers above instead and adds the process runtime, which DeepSpeed leaves out ("model states only"). For
Llama-3.1-70B, ZeRO-3 + optimizer offload, 2 nodes x 8 GPUs: DeepSpeed 16 x 1.5 = 24 B/param -> 788.5 GiB per
node; accelwiz 18 B/param -> 591.4 GiB + 16 x 2 GiB = 607.4 GiB (docs/performance.md, "Host RAM").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.loading import under_zero_init
from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

# Host RAM of one training process before any model is loaded (Python, torch, CUDA runtime libraries).
HOST_PROCESS_BYTES = 2 * GIB
# DeepSpeed NVMe swapping: optimizer swap buffers (buffer_count 4) of one sub-group (sub_group_size 1e9)
# in fp32, parameter swap buffers (buffer_count 5 × buffer_size 1e8) in 16-bit.
NVME_OPTIMIZER_BUFFERS = 4
SUB_GROUP_ELEMENTS = 1_000_000_000
NVME_PARAM_BUFFER_BYTES = 5 * 100_000_000 * 2
# DeepSpeed's `additional_buffer_factor` default (stage3.py, stage_1_and_2.py estimators): a margin on top of
# the states, shown here so the comparison can name it; accelwiz does not multiply by it.
DEEPSPEED_ADDITIONAL_BUFFER_FACTOR = 1.5


def deepspeed_host_buffers(workload: Workload, strategy: Strategy) -> tuple[float, str]:
    """Host bytes per node that DeepSpeed's optimizer offload allocates besides the states states.py counts."""
    if not strategy.is_deepspeed or strategy.offload_optimizer != "cpu":
        return 0.0, ""
    model_width = workload.compute_width
    per_node_share = strategy.world_size / strategy.nodes / strategy.shard_degree
    sharded = workload.trainable_parameters * per_node_share  # this node's part of the trainable parameters
    parts: list[str] = []
    extra = 0.0
    # fp32 training's own fp32 master partition (a copy, on the host here) is states.py's (deepspeed_state_widths)
    if strategy.kind == "zero3":
        extra += model_width * sharded
        parts.append(
            f"ZeRO-3 optimizer offload: a gradient partition in the model dtype ({model_width} B/param) beside "
            "the master's (grad_partitions_flat_buffer)"
        )
    else:
        largest = max(t.numel for t in workload.model.tensors())
        extra += strategy.gpus_per_node * model_width * largest
        parts.append("ZeRO-1/2 optimizer offload: one buffer of the largest parameter per process (temp_grad_buffer)")
    return extra, "; ".join(parts)


def host_ram(workload: Workload, strategy: Strategy, offloaded: float) -> tuple[float, float, list[str]]:
    """Host RAM per node and NVMe bytes per node, with the notes that say what they hold."""
    spec, gpn = workload.model, strategy.gpus_per_node
    load_width = {"fp32": 4, "mixed": 4, "bf16": 2}[workload.precision]
    if workload.regime == "qlora":
        load_width = 1
    if under_zero_init(workload, strategy):  # zero.Init: each module is created in fp32, then partitioned at once
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
    buffers, buffer_note = deepspeed_host_buffers(workload, strategy)
    host = max(loading, offloaded + buffers) + gpn * HOST_PROCESS_BYTES
    notes = [load_note, f"host: {HOST_PROCESS_BYTES / GIB:.0f} GiB per process for Python, torch and CUDA libraries"]
    if offloaded and nvme:
        notes.append("NVMe offload: states on disk, swap buffers in host RAM")
    elif offloaded:
        pinned = " (page-locked: DeepSpeed pins them by default)" if strategy.is_deepspeed else ""
        notes.append(f"offloaded states are held in host RAM{pinned}")
    if buffers:
        notes.append(buffer_note)
    return host, nvme, notes
