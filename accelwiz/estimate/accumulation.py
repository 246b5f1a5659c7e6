"""Gradients kept across the micro-batches of one accumulated step.

The HF Trainer, TRL (its trainers are Trainers) and accelwiz's own loop set gradients to None only after the
optimizer step (transformers' `_inner_training_loop`: `model.zero_grad()` once `optimizer.step()` ran), so with
`gradient_accumulation_steps` N > 1 every micro-batch after the first runs its forward and backward with the
gradients of the ones before it live: they join forward's peak, not only backward's end and the step.

What is kept depends on the engine:

* one GPU, DDP (`no_sync`: the local gradient, all-reduced at the last micro-batch), ZeRO-1 (16-bit gradients in
  `param.grad` until the boundary) and ZeRO-2 (the partition each micro-batch is reduced into): the gradients
  the step holds, `ModelStates.gradients`.
* FSDP under accelerate (`Accelerator.accumulate` and the Trainer enter `Accelerator.no_sync` for every
  micro-batch but the last, unless the plugin's `sync_each_batch`): FSDP1's `no_sync()` makes
  `_post_backward_hook` return before `_reduce_grad` (torch/distributed/fsdp/_runtime_utils.py: `if not
  state._sync_gradients: ... return`), FSDP2's `set_requires_gradient_sync(False)` makes `post_backward` keep
  it (`to_accumulated_grad_if_needed`, cast to `reduce_dtype`, which accelerate's `set_mixed_precision` sets to
  the parameter dtype). Every unit keeps its UNSHARDED gradient: the whole model's, in the compute dtype, on every
  GPU, until the last micro-batch's backward reduce-scatters it unit by unit. A LoRA unit under FSDP1 with
  `use_orig_params` has one flat gradient over its frozen slots too (frozen_base.py `frozen_in_flat_gradient`).
* ZeRO-3: its flat gradient partition is kept between steps anyway (step_phases.py `gradients_kept`).
"""

from __future__ import annotations

from dataclasses import replace

from accelwiz.estimate.frozen_base import frozen_in_flat_gradient
from accelwiz.estimate.sizes import gib
from accelwiz.estimate.states import ModelStates
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload


def with_accumulated_gradients(workload: Workload, strategy: Strategy, states: ModelStates) -> ModelStates:
    """`states` with the gradients a later micro-batch's forward and backward see (`ModelStates.accumulating`),
    and the note saying so; unchanged without accumulation, and under ZeRO-3 (kept anyway)."""
    steps = workload.gradient_accumulation
    if steps <= 1 or strategy.kind == "zero3":
        return states
    if strategy.is_fsdp:
        width = workload.compute_width
        frozen = workload.model.num_parameters if frozen_in_flat_gradient(workload, strategy) else 0
        kept = float(width * (workload.trainable_parameters + frozen))
        note = (f"gradient accumulation x{steps} under FSDP: accelerate's no_sync skips the reduce-scatter of every "
                f"micro-batch but the last, so each unit keeps its unsharded gradient ({gib(kept)}, the whole "
                f"model's in {'fp32' if width == 4 else 'the 16-bit compute dtype'} on every GPU) through the next "
                "micro-batch's forward and backward; the FSDP plugin's sync_each_batch reduces each one instead")
    else:
        kept = states.gradients
        if not kept:  # offloaded to the host as they are reduced
            return states
        note = (f"gradient accumulation x{steps}: the gradients ({gib(kept)}) are zeroed only after the optimizer "
                "step, so every micro-batch after the first runs forward and backward with them live")
    return replace(states, accumulating=kept, notes=(*states.notes, note))
