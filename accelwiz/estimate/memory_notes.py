"""What a memory estimate rests on, in words: the assumptions `MemoryEstimate.assumptions` lists."""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.estimate.states import ModelStates
from accelwiz.estimate.step_phases import Phase
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.resolution.stack import version_text
from accelwiz.vocab import GIB

PHASE_LABEL = {"loading": "loading", "forward": "forward", "backward": "backward", "optimizer": "optimizer step"}


@dataclass(frozen=True)
class PartNotes:
    """The notes each part of the estimate gave, in the order the assumptions list them."""

    engine: str | None
    activations: tuple[str, ...]
    buffers: tuple[str, ...]
    step: str
    reserve: tuple[str, ...]
    runtime: tuple[str, ...]
    loading: str
    host: tuple[str, ...]


def assumptions(workload: Workload, strategy: Strategy, states: ModelStates, logits: float,
                phases: tuple[Phase, ...], peak: Phase, notes: PartNotes) -> tuple[str, ...]:
    """Every assumption the estimate rests on, in the order of the step."""
    phase_text = ", ".join(f"{PHASE_LABEL[p.name]} {p.total / GIB:.2f} GiB" for p in phases)
    return (
        f"{strategy.label} over {strategy.world_size} GPU(s) ({strategy.nodes} node(s))",
        _numerics(workload, strategy),
        *((notes.engine,) if notes.engine else ()),
        *states.notes,
        *notes.activations,
        *_stack_notes(workload),
        *((workload.model.activations_note,) if not workload.model.analytic_activations else ()),
        *_loss_tail_notes(workload, strategy, logits),
        *notes.buffers,
        f"peak over phases (allocated): {phase_text}; the largest is the {PHASE_LABEL[peak.name]}",
        notes.step,
        _gradients_note(workload, strategy),
        *notes.reserve,
        "runtime beside the tensors: " + "; ".join(notes.runtime),
        notes.loading,
        *notes.host,
    )


def _loss_tail_notes(workload: Workload, strategy: Strategy, logits: float) -> list[str]:
    if not logits:
        return ["no LM head counted"]
    if workload.loss_kernel == "trl-fused-head":
        from accelwiz.estimate.trl_fused_head import fused_head_note

        return [fused_head_note(workload)]
    if workload.loss_kernel == "liger":
        from accelwiz.estimate.fused_loss import fused_loss_note

        return [fused_loss_note(workload, strategy)]
    dtype = "fp32" if workload.loss_dtype == "fp32" else \
        f"{workload.loss_dtype} (a loss on the {workload.loss_dtype} logits, no fp32 upcast)"
    notes = [f"loss tail: {dtype} log-softmax kept for backward ({workload.micro_batch}×{workload.seq_len} tokens × "
             f"vocab {workload.model.vocab_size:,}); logits and loss gradients are phase temporaries"]
    if workload.copies_shifted_logits:
        notes.append(f"transformers {version_text(workload.stack.transformers)} copies the fp32 logits for the "
                     "shifted loss (before 4.49): +2 x batch x seq x vocab bytes in forward, +4 in backward")
    return notes


def _stack_notes(workload: Workload) -> list[str]:
    """What the library versions the run trains with change (resolution/stack.py; `--stack`)."""
    if not workload.keeps_4bit_inputs:
        return []
    return [f"bitsandbytes {version_text(workload.stack.bitsandbytes)} keeps each 4-bit linear's input for backward "
            "(MatMul4Bit ctx.tensors = (A, B), dropped in 0.43.2): inputs no other op keeps are counted once per "
            "layer (the activations' 'bitsandbytes' term)"]


def _gradients_note(workload: Workload, strategy: Strategy) -> str:
    """When the gradients exist, as the strategy and the training loop keep them."""
    if strategy.kind == "zero3":
        return "gradients: ZeRO-3 keeps its flat gradient partition between steps"
    if strategy.is_deepspeed:
        return "gradients: ZeRO's partition from backward's first reduce to the step, its reduce bucket with it"
    if workload.legacy_trainer:
        return "gradients zeroed in place: allocated through every phase"
    return "gradients exist from backward to the optimizer step (zero_grad(set_to_none=True))"


def _numerics(workload: Workload, strategy: Strategy) -> str:
    dropout = f", dropout {workload.lora_dropout:g}" if workload.lora_dropout else ""
    regime = {
        "full": "full fine-tuning",
        "lora": f"LoRA r={workload.lora_rank}{dropout}",
        "qlora": f"QLoRA r={workload.lora_rank}{dropout}, NF4 base with double quantization (4.127 bits/param)",
    }
    precision = {
        "fp32": "fp32",
        "mixed": "mixed precision (16-bit compute, fp32 master weights)",
        "bf16": "pure bf16 (no fp32 master copy)",
    }
    if strategy.is_deepspeed and (workload.precision == "bf16" or strategy.bf16_master_weights_and_grads and
                                  workload.precision == "mixed"):  # DeepSpeed keeps a master copy (states.py)
        master = "bf16" if strategy.bf16_master_weights_and_grads else "fp32"
        states = "bf16" if strategy.bf16_master_weights_and_grads and strategy.bf16_optimizer_states else "fp32"
        said = f": {strategy.bf16_master_note}" if strategy.bf16_master_note else ""  # the JSON or the flags
        precision[workload.precision] = (
            f"bf16 model under DeepSpeed: {master} master weights and {states} optimizer states in its ZeRO "
            "optimizer (not pure bf16" + (said if master == "bf16" else f"; bf16_master_weights_and_grads off{said}")
            + ")"
        )
    return (
        f"{regime[workload.regime]}; {workload.trainable_parameters:,} trainable of "
        f"{workload.model.num_parameters:,} parameters; {precision[workload.precision]}"
    )
