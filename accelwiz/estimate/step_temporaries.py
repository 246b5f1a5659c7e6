"""What the optimizer step allocates on the GPU and frees again, by the implementation that runs it: torch AdamW's
foreach temporary, the fused path, the per-tensor loop (loop_step.py), bitsandbytes' in-place kernels,
DeepSpeed's flat step (deepspeed_step.py) and the CPU step (cpu_step.py). The states the optimizer keeps are
states.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.deepspeed_step import deepspeed_step_temporaries
from accelwiz.estimate.paged_states import PAGED_OPTIMIZERS
from accelwiz.estimate.states import trainable_width

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def optimizer_step_temporaries(workload: Workload, strategy: Strategy) -> tuple[float, str]:
    """GPU bytes the optimizer step allocates and frees, by the implementation that runs it.

    torch.optim.AdamW on CUDA takes the multi-tensor `foreach` path (its default for CUDA tensors), whose
    `torch._foreach_sqrt(exp_avg_sqs)` is one temporary the size of the (sharded) trainable parameters in the
    state dtype. A per-parameter loop makes its temporaries one tensor at a time: the largest tensor it steps
    sets them (loop_step.py). bitsandbytes 8-bit Adam and the fused path allocate no parameter-sized temporary;
    SGD and Adafactor are counted without one.

    DeepSpeed wraps the same torch optimizer (accelerate passes the script's) and steps it on its flat fp32
    master partition, one sub-group at a time under ZeRO-3 (`sub_group_size`, 1e9 elements); before each
    step it flattens the 16-bit gradients into an fp32 copy of that partition (stage_1_and_2.py `step`:
    `self.flatten(self.averaged_gradients[i]).to(fp32)`; stage3.py `_prepare_fp32_grad_for_sub_group`). Both
    are flat buffers larger than any cached activation block: each takes a segment of its own
    (reserve.py `reserved_bytes`, its `step_segments`), seen in the allocator's own event stream on an H200.
    """
    if strategy.offload_optimizer != "none":
        return 0.0, "optimizer step on the CPU: no GPU temporaries"
    if strategy.is_deepspeed:
        return deepspeed_step_temporaries(workload, strategy)
    if workload.optimizer in PAGED_OPTIMIZERS:
        return 0.0, (f"bitsandbytes' {workload.optimizer} step: its kernel updates the parameter and states in place "
                     "(F.optimizer_update_32bit / optimizer_update_8bit_blockwise), no parameter-sized temporary")
    if workload.optimizer != "adamw":
        return 0.0, f"{workload.optimizer} step: no parameter-sized temporaries counted"
    if strategy.device == "cpu":  # torch's AdamW on CPU tensors: the single-tensor loop (estimate/cpu.py)
        from accelwiz.estimate.cpu_step import cpu_step_temporaries

        return cpu_step_temporaries(workload)
    from accelwiz.estimate.loop_kernel import runs_a_loop
    from accelwiz.estimate.loop_step import loop_step_temporaries

    if runs_a_loop(workload):  # the Trainer's adamw_hf default before transformers 4.32, or torch's foreach=False
        return loop_step_temporaries(workload, strategy)
    if workload.optimizer_kernel == "fused":
        return 0.0, "fused AdamW (torch's _fused_adamw_): the step updates in place, no parameter-sized temporary"
    width = trainable_width(workload, strategy)  # torch AdamW's states and temporary: the parameters' dtype
    shards = strategy.shard_degree if strategy.shards_optimizer else 1
    from accelwiz.estimate.modules_to_save import foreach_temporary_bytes  # PEFT's saved copies: their dtype
    from accelwiz.estimate.states import saved_copy_width

    return (
        foreach_temporary_bytes(workload, width, saved_copy_width(workload, strategy)) / shards,
        f"AdamW foreach step: one {width}-byte temporary per (sharded) trainable parameter",
    )
