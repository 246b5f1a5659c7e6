"""Model-states-only formulas as published, for comparison with other tools' numbers.

* `zero_paper_model_states`: ZeRO (Rajbhandari et al., SC'20, arXiv:1910.02054) §5: per device,
  mixed-precision Adam with K = 12 bytes/param of fp32 optimizer state; stage 0 = DDP, 1 = P_os, 2 = P_os+g,
  3 = P_os+g+p.
* `deepspeed_zero2_model_states` / `deepspeed_zero3_model_states`: the "deepspeed-compatible" mode, the
  formulas of `estimate_zero2_model_states_mem_needs` (runtime/zero/stage_1_and_2.py, current since v0.14.3:
  `2P + 18P/N`) and `estimate_zero3_model_states_mem_needs` (runtime/zero/stage3.py), returning
  (cpu_bytes_per_node, gpu_bytes). They count model states only, as DeepSpeed does; `estimate_memory` adds the
  rest.
"""

from __future__ import annotations


def zero_paper_model_states(parameters: float, dp_degree: int, stage: int, k: int = 12) -> float:
    """Bytes per device of fp16 params (2Ψ), fp16 grads (2Ψ) and optimizer states (KΨ), sharded by stage."""
    params, grads, optimizer = 2 * parameters, 2 * parameters, k * parameters
    if stage >= 1:
        optimizer /= dp_degree
    if stage >= 2:
        grads /= dp_degree
    if stage >= 3:
        params /= dp_degree
    return params + grads + optimizer


def deepspeed_zero2_model_states(
    total_params: int,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    *,
    cpu_offload: bool = True,
    additional_buffer_factor: float = 1.5,
    legacy: bool = False,
) -> tuple[int, int]:
    """DeepSpeed's ZeRO-2 estimator; `legacy=True`: the pre-0.14.3 `4P + 16P/N` the docs still show."""
    total_gpus = num_nodes * num_gpus_per_node
    if cpu_offload:
        gpu = 2 * total_params
        cpu = total_params * max(4 * total_gpus, 16) * additional_buffer_factor
    else:
        gpu = (
            4 * total_params + int(16 * total_params / total_gpus)
            if legacy
            else 2 * total_params + int(18 * total_params / total_gpus)
        )
        cpu = total_params * 4 * num_gpus_per_node * additional_buffer_factor
    return int(cpu), int(gpu)


def deepspeed_zero3_model_states(
    total_params: int,
    largest_layer_params: int,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    *,
    cpu_offload: bool = True,
    cpu_offload_params: bool = True,
    zero_init: bool = True,
    additional_buffer_factor: float = 1.5,
) -> tuple[int, int, int]:
    """DeepSpeed's ZeRO-3 estimator: (cpu bytes per node, gpu bytes, largest-layer working memory)."""
    total_gpus = num_nodes * num_gpus_per_node
    gpus_factor = 1 / num_nodes
    largest_layer_memory = 4 * largest_layer_params
    abf = additional_buffer_factor
    if cpu_offload:
        if cpu_offload_params:
            gpu = largest_layer_memory
            cpu = (
                total_params * 18 * gpus_factor * abf
                if zero_init
                else total_params * max(4 * num_gpus_per_node, 18 * gpus_factor) * abf
            )
        else:
            gpu = largest_layer_memory + int(2 * total_params / total_gpus)
            cpu = (
                total_params * 16 * gpus_factor * abf
                if zero_init
                else total_params * max(4 * num_gpus_per_node, 16 * gpus_factor) * abf
            )
    else:
        gpu = largest_layer_memory + int(18 * total_params / total_gpus)
        cpu = (
            largest_layer_params * 4 * num_gpus_per_node * abf
            if zero_init
            else total_params * 4 * num_gpus_per_node * abf
        )
    return int(cpu), int(gpu), int(largest_layer_memory)
