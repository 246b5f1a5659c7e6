"""The phases of one training step and the bytes live at each one's peak (memory.py takes their maximum).

Loading, forward, backward and the optimizer step, as memory.py's docstring describes them; each phase is
a dict of category -> bytes, so the peak can say what is live (`MemoryEstimate.at_peak`).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.estimate.activations import loss_transient_bytes, recompute_bytes
from accelwiz.estimate.fsdp_reserve import fsdp_one_unit_released
from accelwiz.estimate.states import ModelStates, peft_fp32_adapters
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import reduce_bucket_elements, zero3_gathered_buffer_bytes
from accelwiz.estimate.zero3_reduce_copy import zero3_reduce_copies


@dataclass(frozen=True)
class Phase:
    name: str
    parts: dict[str, float]  # category -> bytes live at this phase's peak
    moment: str = ""  # backward's moments: "start", "recompute", "end" (the phase's peak is the largest)

    @property
    def label(self) -> str:
        return f"{self.name} {self.moment}" if self.moment else self.name

    @property
    def total(self) -> float:
        return sum(self.parts.values())


@dataclass(frozen=True)
class StepTensors:
    """What the step's phases are made of, besides the model states: bytes per GPU."""

    activations: int  # what the layers keep for backward at the end of forward
    logits: int  # the loss tail kept for backward
    buffers: float  # communication buffers
    autocast: bool  # torch.autocast over fp32 weights
    step: float  # the optimizer step's temporaries (step_temporaries.py `optimizer_step_temporaries`)
    loaded: float  # loading's peak (loading.py)
    turn: float = 0.0  # ZeRO-3: gathered parameters kept across the forward->backward turn
    recomputing: float = 0.0  # ZeRO-3: gathered parameters at their most during backward


def phases_of(moments: tuple[Phase, ...]) -> tuple[Phase, Phase, Phase, Phase]:
    """Live bytes at the peak of loading, forward, backward and the optimizer step, from `step_moments`:
    backward's peak is the largest of its moments."""
    loading, forward, *backward, optimizer = moments
    return loading, forward, max(backward, key=lambda p: p.total), optimizer


def step_moments(workload: Workload, strategy: Strategy, states: ModelStates,
                 tensors: StepTensors) -> tuple[Phase, ...]:
    """Live bytes at loading, forward, backward's start, a checkpointed layer's recomputation, backward's end
    and the optimizer step: every moment a phase's peak is taken over (post-training replaces the loss tail in
    some of them and keeps the others: posttraining.py).

    `tensors.turn`, `tensors.recomputing`: ZeRO-3's parameters gathered beyond the largest module that
    `buffers` already holds, kept across the forward→backward turn (end of forward, start of backward) and at
    their most during backward (a checkpointed layer's recomputation included).
    """
    # gradients live from forward on: ZeRO-3's kept partition, the legacy Trainer's, or accumulation's (accumulation.py)
    grads_always = states.gradients if gradients_kept(workload, strategy) else states.accumulating
    base = {
        "weights": states.weights - states.autocast_copy,
        "gradients": grads_always,
        "optimizer_states": states.optimizer_states,
        "activations": 0.0,
        "logits": 0.0,
        "temporaries": 0.0,
        "buffers": tensors.buffers,
    }
    forward, *backward = _forward_backward(workload, strategy, states, tensors, base)
    # ZeRO-3's step starts by releasing every gathered parameter (stage3.py `_partition_all_parameters`); FSDP's
    # whole model one unit is resharded, its unsharded gradient freed, before it (fsdp_reserve.py)
    released = zero3_gathered_buffer_bytes(workload, strategy) + fsdp_one_unit_released(workload, strategy)
    optimizer = Phase("optimizer", {**base, "gradients": states.gradients, "temporaries": tensors.step,
                                    "buffers": tensors.buffers - released})
    resident = states.weights - states.autocast_copy
    loading = Phase("loading", {**dict.fromkeys(forward.parts, 0.0), "weights": resident,
                                "temporaries": tensors.loaded - resident})
    return loading, forward, *backward, optimizer


def _forward_backward(workload: Workload, strategy: Strategy, states: ModelStates, tensors: StepTensors,
                      base: dict[str, float]) -> tuple[Phase, Phase, Phase, Phase]:
    """Forward's peak, and backward's moments: its start, a layer's recomputation and its end."""
    buffers, turn = tensors.buffers, tensors.turn
    bucket = _backward_bucket(workload, strategy)  # ZeRO-1/2's reduce bucket: from backward's start to the step
    kept = {"weights": states.weights, "activations": float(tensors.activations), "logits": float(tensors.logits)}
    loss_forward, loss_backward = loss_transient_bytes(workload, autocast=tensors.autocast)
    forward = Phase("forward", {**base, **kept, "temporaries": loss_forward, "buffers": buffers - bucket + turn})
    backward_start = Phase("backward", {**base, **kept, "temporaries": loss_backward, "buffers": buffers + turn},
                           "start")
    recomputed = recompute_bytes(workload, autocast=tensors.autocast, strategy=strategy,
                                 fp32_adapters=peft_fp32_adapters(workload, strategy))
    # ZeRO-3's flushed reduce buckets, each copied flat before its reduce-scatter (zero3_reduce_copy.py): while
    # backward runs beside a layer's gradients and the activations left, the last one at its end
    copies = zero3_reduce_copies(workload, strategy)
    recompute = Phase("backward", {**base, "weights": states.weights, "activations": float(tensors.activations),
                                   "temporaries": recomputed,
                                   "buffers": buffers + tensors.recomputing + copies.during}, "recompute")
    backward_end = Phase("backward", {**base, "gradients": max(states.gradients, base["gradients"]),
                                      "temporaries": tied_embedding_gradients(workload, strategy),
                                      "buffers": buffers + copies.at_end}, "end")
    return forward, backward_start, recompute, backward_end


def gradients_kept(workload: Workload, strategy: Strategy) -> bool:
    """Gradients allocated once and kept between steps: ZeRO-3's flat partition (stage3.py
    `grad_partitions_flat_buffer`) and the legacy Trainer's (no set_to_none)."""
    return strategy.kind == "zero3" or workload.legacy_trainer


def _backward_bucket(workload: Workload, strategy: Strategy) -> float:
    """ZeRO-1/2's reduce bucket (stage_1_and_2.py `backward` allocates `ipg_buffer`; the step drops it)."""
    if strategy.kind not in ("zero1", "zero2"):
        return 0.0
    return workload.compute_width * reduce_bucket_elements(workload, strategy)


def tied_embedding_gradients(workload: Workload, strategy: Strategy) -> float:
    """A trained tied embedding gets two gradients (LM head, embedding) summed into a third at backward's end."""
    spec = workload.model
    if workload.regime != "full" or not spec.tied_lm_head:
        return 0.0
    if strategy.offload_optimizer != "none" and strategy.is_deepspeed:
        return 0.0
    width = 4 if workload.precision == "fp32" or (workload.precision == "mixed" and not strategy.is_deepspeed) else 2
    return 2.0 * width * spec.vocab_size * spec.embedding_width  # OPT-350m's embedding is 512 wide, not 1024
