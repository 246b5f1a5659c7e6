"""AdamW's per-parameter loop (`--optimizer-kernel loop`): the temporaries it makes for each tensor it steps, and
the largest tensor it steps, which sets its peak (one tensor's temporaries live at a time).

What the loop makes, read in the libraries' source:

* transformers' AdamW (the Trainer's `adamw_hf`, its default before 4.32; optimization.py `AdamW.step`, the same in
  4.20.0 line 362, 4.27.1 line 447, 4.31.0 line 468 and 4.45.0 line 648): `denom = exp_avg_sq.sqrt().add_(eps)`,
  one temporary the size of the parameter in the states' dtype (`torch.zeros_like(p)`: the parameter's); the
  moments, `addcdiv_` and the weight decay `p.add_(p, alpha=...)` update in place.
* torch's single-tensor AdamW (`foreach=False`, and torch < 2.0's CUDA default; torch 2.13 optim/adam.py
  `_single_tensor_adam`, AdamW's too): `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`, the
  square root and its quotient alive at once: two (amsgrad: the same on `max_exp_avg_sqs[i]`, its
  `torch.maximum(..., out=)` in place; decoupled weight decay `param.mul_` in place). cpu_step.py owns the count.

The largest tensor it steps: under DeepSpeed ZeRO the optimizer's parameters are the flat master partitions, one
per parameter group (ZeRO-3: one per sub-group, `sub_group_size`), so the loop's temporary is partition-sized
(deepspeed_step.py counts it); under FSDP1 without use_orig_params a unit's flat parameter shard; under FSDP2
(DTensor shards) or FSDP1's use_orig_params an original parameter's shard; under DDP or on one GPU the largest
trainable parameter itself (the embedding or the LM head of a full fine-tune; a LoRA matrix).
Measured by real optimizer steps on this CPU (tests/estimate/test_loop_step.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.loop_kernel import loop_temporaries
from accelwiz.estimate.states import saved_copy_width, trainable_width

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

def stepped_tensors(workload: Workload, strategy: Strategy) -> list[tuple[float, int]]:
    """(elements, bytes per element) of each tensor the loop steps outside DeepSpeed (whose flat partitions
    deepspeed_step.py sizes), in the order it steps them: FSDP1 without use_orig_params each unit's flat shard
    (the root's embedding and head first, then the blocks; the whole model where it is one unit); FSDP2 and FSDP1's
    use_orig_params each parameter's shard; DDP and one GPU each trainable parameter. LoRA: a modules_to_save copy
    (bounded by the largest model tensor, in the original's dtype) and the adapter matrices."""
    spec = workload.model
    scale, width = spec.override_scale, trainable_width(workload, strategy)
    shards = strategy.shard_degree if strategy.is_fsdp else 1
    if workload.regime != "full":
        largest = max((t.numel for t in spec.tensors()), default=0) * scale
        saved = [(min(workload.saved_parameters, largest), saved_copy_width(workload, strategy))] \
            if workload.saved_parameters else []
        sizes = saved + [(n, width) for n in workload.adapter_matrices]
    elif strategy.is_fsdp and strategy.fsdp_version == 1 and not strategy.fsdp_use_orig_params:
        from accelwiz.estimate.fsdp_reserve import fsdp_root_parameters

        units = [spec.num_parameters] if strategy.fsdp_wrap == "none" else \
            [fsdp_root_parameters(spec)] + [spec.layer_parameters] * spec.num_layers
        sizes = [(n, width) for n in units]
    else:
        sizes = [(t.numel * scale, width) for t in spec.tensors()]
    return [(n / shards, w) for n, w in sizes]


def loop_peak_bytes(tensors: list[tuple[float, int]], count: int) -> float:
    """The loop's peak: `count` temporaries of the tensor it steps beside the previous tensor's `denom`, which the
    Python loop keeps bound until the new one is assigned (measured: a tiny Llama's embedding, then its q_proj)."""
    previous = [(0.0, 0), *tensors[:-1]]
    return max((count * n * w + n0 * w0 for (n, w), (n0, w0) in zip(tensors, previous)), default=0.0)


def loop_step_temporaries(workload: Workload, strategy: Strategy) -> tuple[float, str]:
    """GPU bytes the loop holds at its peak outside DeepSpeed (`loop_peak_bytes`), in each tensor's states' dtype."""
    count, whose = loop_temporaries(workload)
    tensors = stepped_tensors(workload, strategy)
    largest, width = max(tensors, default=(0.0, 0))
    return loop_peak_bytes(tensors, count), (
        f"AdamW per-parameter loop, {whose}: {count} temporar{'y' if count == 1 else 'ies'} of each tensor it steps "
        f"beside the previous one's denom, the largest {largest:,.0f} elements ({width} B each)")
