"""DeepSpeed 0.19.8's optimizer: the widths of its master copy and states, and what its flat partition (ZeRO-3:
sub-group) step allocates on the GPU.

step_temporaries.py asks for it (`optimizer_step_temporaries`); memory.py counts its temporaries in the optimizer
phase and hands its flat buffers to reserve.py as segments of their own (`deepspeed_step_segments`). Measured by the
H200's ZeRO-2 allocator stream (tests/fixtures/allocator_streams/10) and by real ZeRO engines on the CPU
(tests/estimate/test_deepspeed_step_peak.py; a per-parameter loop client: test_loop_step.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def deepspeed_state_widths(workload: Workload, strategy: Strategy) -> tuple[int, int]:
    """Bytes per trainable parameter of DeepSpeed's master copy and of each optimizer state.

    DeepSpeed 0.19.8 (base_optimizer.py `_configure_master_weights`): the master partition is fp32 unless
    `bf16.bf16_master_weights_and_grads`; Adam's states follow the master dtype only with
    `bf16.bf16_optimizer_states` (which requires the former), else they stay fp32. A bf16 model without those
    options is mixed precision to DeepSpeed (fp32 masters), never pure bf16. The options hold for "mixed" as for
    "bf16": the engine casts the model to 16 bits either way (`_cast_module_mixed_precision`), and a --config whose
    JSON enables them resolves "mixed" where the script loads fp32 weights (resolution/workload.py
    `estimator_precision`); the flags that say them ask for --precision bf16 (bf16_master.py).

    An fp32 model (no bf16/fp16 section) still gets a separate fp32 master partition, 4 more bytes per (sharded)
    parameter: ZeRO-1/2 clone it (stage_1_and_2.py 560-561, `...[partition_id].detach().clone().to(device=...,
    dtype=self.master_weights_and_grads_dtype)`), and ZeRO-3's alias for an fp32 partition (stage3.py 1162-1167,
    #7651) needs `partition.device == self.device`, a torch.device against the accelerator's device name, a str
    (line 333), which torch compares unequal, so it copies (1169-1172, `.to(...).clone().detach()`). Both counted
    on real fp32 engines on this CPU (tests/estimate/test_deepspeed_fp32_master.py).
    """
    if workload.precision == "fp32":
        return 4, 4
    low_master = strategy.bf16_master_weights_and_grads  # a 16-bit model: fp32 returned above
    low_states = low_master and strategy.bf16_optimizer_states
    return (2 if low_master else 4), (2 if low_states else 4)


ZERO3_SUB_GROUP_ELEMENTS = 1e9  # zero_optimization.sub_group_size's default (DeepSpeed 0.19.8 config)


@dataclass(frozen=True)
class _DeepSpeedStep:
    """Bytes per element of the flat partition (ZeRO-3: sub-group) DeepSpeed 0.19.8 steps, by what it holds."""

    elements: float
    gradient: int  # the model-dtype gradient partition (memory.py counts it as gradients)
    copy: int  # the fp32 copy `.to(fp32)` makes (0: the master is the gradient's dtype, `.to` returns it)
    # AdamW's temporaries of the partition: foreach's one; a per-parameter loop's (loop_step.py), the partition
    # being its one parameter; 0: FusedAdam, torch's fused AdamW
    adam: int
    freed_before_update: bool = True  # ZeRO-1/2 free the gradient partition before the update; ZeRO-3 keeps it

    @property
    def temporaries(self) -> float:
        """Allocated beyond the model states at the step's peak, the partition aside. Two moments (stage_1_and_2.py
        `step`, stage3.py `_prepare_fp32_grad_for_sub_group`): the copy, where `self.flatten(averaged_gradients)`
        (a new model-dtype buffer) and its `.to(fp32)` exist at once; and the update, where the fp32 copy (or the
        flattened buffer itself) and AdamW's temporaries exist. ZeRO-1/2 free the gradient partition between
        them (`free_grad_in_param_list`, `averaged_gradients[i] = None`; the H200's stream 10: 2 + 4 then 4 + 4 on
        a 2-byte partition); ZeRO-3's flat gradient buffer stays."""
        at_copy = self.gradient + self.copy
        at_update = (self.copy or self.gradient) + self.adam
        if self.freed_before_update:
            at_update -= self.gradient
        return self.elements * max(at_copy, at_update)

    @property
    def segments(self) -> float:
        """The flat buffers that take segments of their own (reserve.py): the fp32 copy and AdamW's temporaries
        (the flattened copy takes a block the partition or the loading freed: stream 10 on an H200)."""
        return self.elements * (self.copy + self.adam)


def _deepspeed_step(workload: Workload, strategy: Strategy) -> _DeepSpeedStep:
    elements = workload.trainable_parameters / strategy.shard_degree
    if strategy.kind == "zero3":
        elements = min(elements, ZERO3_SUB_GROUP_ELEMENTS)
    master, state = deepspeed_state_widths(workload, strategy)
    gradient = workload.compute_width
    copy = 4 if master == 4 and workload.precision != "fp32" else 0
    return _DeepSpeedStep(elements, gradient, copy, state * _adam_temporaries(workload),
                          freed_before_update=strategy.kind != "zero3")


def _adam_temporaries(workload: Workload) -> int:
    """Partition-sized temporaries of the client AdamW's step, in the states' dtype: foreach's one; a per-parameter
    loop's (transformers' AdamW one, torch's single-tensor two: loop_step.py), whose one "parameter" is the flat
    partition; DeepSpeed's FusedAdam (a JSON optimizer section) and torch's fused AdamW update in place: none.
    Each partition is stepped by an `optimizer.step()` of its own (0.19.8 stage_1_and_2.py and stage3.py
    `_optimizer_step`), so no previous partition's `denom` is still bound (loop_step.py `loop_peak_bytes`)."""
    from accelwiz.estimate.loop_kernel import loop_temporaries, runs_a_loop

    if runs_a_loop(workload):
        return loop_temporaries(workload)[0]
    return 1 if workload.optimizer == "adamw" and workload.optimizer_kernel == "foreach" else 0


def deepspeed_step_segments(workload: Workload, strategy: Strategy) -> float:
    """DeepSpeed's step buffers that take segments of their own in the caching allocator (reserve.py); 0 where
    the step runs on the CPU or the strategy is no ZeRO."""
    if not strategy.is_deepspeed or strategy.offload_optimizer != "none":
        return 0.0
    return _deepspeed_step(workload, strategy).segments


def deepspeed_step_temporaries(workload: Workload, strategy: Strategy) -> tuple[float, str]:
    """The step's temporaries at its peak moment (`_DeepSpeedStep.temporaries`), and what they are."""
    step = _deepspeed_step(workload, strategy)
    what = [name for name, width in ((f"the flattened {step.gradient}-byte gradients", step.gradient),
                                     ("their fp32 copy", step.copy),
                                     (f"AdamW's temporaries ({step.adam} B/element, {_adam_kind(workload)})",
                                      step.adam)) if width]
    unit = "sub-group" if strategy.kind == "zero3" else "partition"
    freed = (", the gradient partition freed before the update" if step.freed_before_update and step.copy
             else "")
    return step.temporaries, (
        f"DeepSpeed step on its flat {unit} ({step.elements:,.0f} elements): " + ", ".join(what)
        + f"; {step.temporaries / max(step.elements, 1):g} B/element at its peak{freed}"
    )


def _adam_kind(workload: Workload) -> str:
    from accelwiz.estimate.loop_kernel import loop_temporaries, runs_a_loop

    if runs_a_loop(workload):
        return "a per-parameter loop stepping the partition as one parameter: " + loop_temporaries(workload)[1]
    return "foreach"
