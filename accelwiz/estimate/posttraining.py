"""Post-training memory (TRL's DPO and GRPO): the training step of `estimate_memory`, reshaped, plus what TRL
adds around it: the reference model, GRPO's generation phase and its log-prob pass.

What TRL 1.16 does, read in its source (trl/trainer/dpo_trainer.py, grpo_trainer.py, models/utils.py):

* **DPO** concatenates chosen and rejected: one forward over `2 × per_device_train_batch_size` sequences of
  prompt + completion (`DPOTrainer._compute_loss`: `chosen_logps, rejected_logps = logps.chunk(2)`).
* **GRPO**'s `per_device_train_batch_size` counts completions; each step trains on prompt + completion tokens.
  Every `steps_per_generation` steps (default: the accumulation) a process generates its whole share of the
  generation batch at once: `per_device_train_batch_size × steps_per_generation` completions.
* **Reference model**: a second copy of the policy, built with the policy's dtype (`ref_model_init_kwargs
  .setdefault("dtype", self.model.dtype)`), except under PEFT (the adapter is disabled instead), with DPO's
  `precompute_ref_log_probs` (computed before training, then freed) and with GRPO's `beta == 0.0` (its
  default). Under DeepSpeed, `prepare_deepspeed` keeps ZeRO-3 (the copy is sharded) and sets any other stage
  to 0 (a whole copy per GPU); under FSDP, `prepare_fsdp` shards it.
* **Fused LM head**: DPO and GRPO, like SFT, call the model with `fused_lm_head=True` (trl/trainer/utils.py
  `add_fused_lm_head`), which never materialises the `[tokens, vocab]` logits. The training step is a workload
  that says so (`training_workload`: `loss_kernel` "trl-fused-head", `scored_positions_per_sequence` the
  completion length where Triton runs, `compact`), and estimate_memory counts it as it counts SFT's
  (estimate/trl_fused_head.py: one tile buffer in forward and backward, backward's fp32 accumulators, 16 bytes
  kept per scored position). The reference forward runs inside the policy's forward moment (the policy's
  activations kept, the reference's tile in the same buffer size); GRPO's no-grad log-prob pass holds what the
  step's forward holds of the head. Measured against a trace of the real DPOTrainer and GRPOTrainer steps, forward
  and backward (tests/posttraining/test_posttraining_trace.py).
* **Generation** (GRPO): HF `generate`'s KV cache, ZeRO-3's gathered model, vLLM's share (grpo_generation.py).
* **Liger's GRPO loss** (TRL 0.17-1.12 with `use_liger_kernel`, `--loss-kernel liger --stack trl==VERSION`): the
  step is the fused head's, plus a moment at the forward's end holding two LM-head-sized tensors, each in a segment
  of its own beside what loading reserved (liger_grpo.py).

Every moment of the combined estimate is a moment of the training step (`MemoryEstimate.moments`: forward,
backward's start, recomputation and end, the step) with its own live parts, plus what TRL holds through it (the
reference copy as weights, vLLM colocate's share as its weights and the rest); GRPO's log-prob pass and generation
are the step's forward moment without its activations and loss, plus their own tensors. So the parts at the peak are
what is live at the peak's moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from accelwiz.estimate.grpo_generation import GenerationEstimate, generation_notes, grpo_generation, vllm_weights
from accelwiz.estimate.liger_grpo import LigerGrpoLoss, liger_grpo_loss
from accelwiz.estimate.loading_warmup import gpu_memory_bytes, loading_reserved
from accelwiz.estimate.memory import MemoryEstimate, estimate_memory, process_runtime
from accelwiz.estimate.posttraining_settings import KINDS, Kind, PostTraining  # noqa: F401 (re-exported)
from accelwiz.estimate.reserve import reserved_bytes
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

Parts = dict[str, int]  # category (render.ROWS) -> bytes live at one moment


@dataclass(frozen=True)
class PostTrainingEstimate:
    settings: PostTraining
    training: MemoryEstimate  # the TRL step alone, as estimate_memory sees it
    reference_bytes: int  # per GPU
    reference_note: str
    generation: GenerationEstimate | None
    combined: MemoryEstimate  # every phase (training + reference, log-prob pass, generation): what is judged
    notes: tuple[str, ...] = field(default=())


def training_workload(workload: Workload, post: PostTraining, *, compact: bool = True) -> Workload:
    """The training micro-step as TRL runs it: its sequences (DPO's chosen and rejected together, prompt +
    completion), its loss through TRL's fused LM head (trl_fused_head.py), which scores the completion positions
    only where Triton runs (`compact`: add_fused_lm_head's `hidden_states[mask]`) and every position elsewhere."""
    if post.kind == "sft":
        return workload
    batch = workload.micro_batch * (2 if post.kind == "dpo" else 1)
    loaded = {}
    if workload.regime == "lora" and workload.precision == "mixed" and workload.base_dtype is None:
        # accelwiz's DPO/GRPO run hands TRL the checkpoint's path (trainer/trl_run.py), and TRL 1.16 loads a
        # model named by string in float32 (create_model_from_path): the frozen base is fp32, not the built-in
        # trainer's 16-bit one (estimate/frozen_base.py `frozen_base_width`)
        loaded = {"base_dtype": "fp32", "kbit_prepared": False}
    return replace(workload, micro_batch=batch, seq_len=post.sequence, loss_kernel="trl-fused-head",
                   scored_positions_per_sequence=post.max_completion_length if compact else None, **loaded)


def reference_bytes(workload: Workload, strategy: Strategy, post: PostTraining) -> tuple[int, str]:
    """The reference model's weights per GPU, and why that much (module docstring)."""
    if post.kind == "sft":
        return 0, ""
    if workload.regime != "full":
        return 0, "reference: the policy with its adapter disabled (PEFT): no second copy"
    if post.kind == "dpo" and post.precompute_ref_log_probs:
        return 0, "reference: log-probs precomputed before training, the model freed: no copy while training"
    if post.kind == "grpo" and post.effective_beta == 0.0:
        return 0, "reference: none (GRPO with beta 0.0, TRL's default, loads no reference model)"
    # the policy's dtype: fp32 where the model stays fp32 under autocast (single, DDP), else 16-bit
    width = 4 if workload.precision == "fp32" or (
        workload.precision == "mixed" and strategy.kind in ("single", "ddp")) else 2
    whole = width * workload.model.num_parameters
    if strategy.kind == "zero3" or (strategy.is_fsdp and strategy.shards_parameters):
        return round(whole / strategy.shard_degree), (
            f"reference: a {width * 8}-bit copy sharded over {strategy.shard_degree} GPUs "
            f"({'prepare_deepspeed keeps ZeRO-3' if strategy.is_deepspeed else 'prepare_fsdp'})")
    stage = " (prepare_deepspeed runs it at ZeRO stage 0)" if strategy.is_deepspeed else ""
    return whole, f"reference: a whole {width * 8}-bit copy of the model on every GPU{stage}"


def estimate_posttraining(workload: Workload, strategy: Strategy, post: PostTraining,
                          gpu_bytes: int | None = None, *, compact: bool = True,
                          gpu_name: str | None = None) -> PostTrainingEstimate:
    """Per-GPU peak over the TRL step, the log-prob pass and generation, for `workload` under `strategy`.

    `workload.micro_batch` is TRL's `per_device_train_batch_size` (pairs for DPO, completions for GRPO);
    `gpu_bytes` (one GPU's memory) sizes vLLM colocate's share; `gpu_name`, when known, the runtime beside the
    tensors (as estimate_memory); `compact`: the fused head scores the completion positions only (Triton, as on
    CUDA) rather than every position (training_workload). Every moment is the training step's own live parts
    (`MemoryEstimate.moments`), plus what TRL adds at it, so the combined peak says what is live at it.
    """
    step = training_workload(workload, post, compact=compact)
    training = estimate_memory(step, strategy, gpu_name)  # the loss tail is the fused head's (trl_fused_head.py)
    ref, ref_note = reference_bytes(workload, strategy, post)
    notes = [ref_note] if ref_note else []
    moments = [(label, dict(parts)) for label, parts in training.moments]
    if post.kind == "dpo":
        notes.append(f"DPO: chosen and rejected in one forward: {step.micro_batch} sequences of "
                     f"{post.max_prompt_length} + {post.max_completion_length} tokens per micro-step")
    generation = None
    liger = liger_grpo_loss(workload, strategy, post.max_completion_length) if post.kind == "grpo" else None
    if liger is not None:
        forward = dict(dict(training.moments)["forward"])
        moments.append(("loss", {**forward, "logits": forward["logits"] + liger.at_peak}))
        notes.append(liger.note())
    if post.kind == "grpo":
        generation = grpo_generation(workload, strategy, post, gpu_bytes)
        moments += _grpo_moments(dict(dict(training.moments)["forward"]), step, generation)
        notes += generation_notes(generation, post)
    added = _added_everywhere(ref, generation)  # the reference copy, vLLM colocate's share: in every moment
    moments = [(label, {key: value + added.get(key, 0) for key, value in parts.items()}) for label, parts in moments]
    combined = _combined(training, moments, ref, added, tuple(notes), gpu_name, liger)
    return PostTrainingEstimate(post, training, ref, ref_note, generation, combined, tuple(notes))


def _grpo_moments(forward: Parts, step: Workload, generation: GenerationEstimate) -> list[tuple[str, Parts]]:
    """GRPO's log-prob pass and generation, between two training steps: what the training step holds outside
    its forward's activations and loss (its forward moment without them: weights with autocast's copies, the
    optimizer states, gradients where kept between steps, the buffers a forward holds), plus the pass's own."""
    between = {**forward, "activations": 0, "logits": 0, "temporaries": 0}
    # the no-grad pass over the completions (old and reference log-probs), one micro-batch at a time
    # (`_get_per_token_logps_and_entropies`, batch_size per_device_train_batch_size), through the same fused head:
    # what the step's forward holds of it (its tile and casts, its per-position floats), no logits
    moments = [("logprob", {**between, "temporaries": forward["temporaries"] + forward["logits"]})]
    if generation.mode != "vllm-server":  # HF generate's KV cache; ZeRO-3's gathered model beyond the shard
        moments.append(("generation", {**between, "activations": generation.kv_cache_bytes,
                                       "buffers": between["buffers"] + generation.gathered_bytes}))
    return moments


def _torch_reserved(training: MemoryEstimate, moments: list[tuple[str, Parts]], ref: int, share: int,
                    gpu_name: str | None, context: float, liger: LigerGrpoLoss | None) -> float:
    """The allocator's reserve on the torch tensors: the replays' ratio over the static bytes (reserve.py: weights
    and optimizer states at their size), never below what loading left reserved (loading_warmup.py: the step is cut
    from its free pieces); Liger's two LM-head-sized tensors in segments of their own beside what loading and the
    forward reserved (liger_grpo.py), which the backward's tensors then reuse."""
    static = training.weights + ref + training.optimizer_states
    loading, _ = loading_reserved(training.workload, dict(training.phases)["loading"], gpu_memory_bytes(gpu_name),
                                  context, training.strategy)

    def reserve(parts: Parts) -> float:
        return max(loading, reserved_bytes(sum(parts.values()) - share, static, training.workload)[0])

    others = [parts for label, parts in moments if label != "loss"]
    held = max(reserve(parts) for parts in others)
    if liger is not None:
        at_loss = dict(moments)["loss"]
        before = {**at_loss, "logits": at_loss["logits"] - 2 * liger.head_bytes}
        held = max(held, reserve(before) + liger.segments, sum(at_loss.values()) - share)
    return held


def _added_everywhere(ref: int, generation: GenerationEstimate | None) -> Parts:
    """Bytes held through every moment: the reference model (weights) and vLLM colocate's share, its 16-bit
    weights as weights, the rest of it (KV cache, its forward's room) as activations."""
    share = generation.reserved_bytes if generation is not None else 0
    weights = vllm_weights(generation) if generation is not None else 0
    return {"weights": ref + weights, "activations": share - weights}


def _combined(training: MemoryEstimate, moments: list[tuple[str, Parts]], ref: int, added: Parts,
              notes: tuple[str, ...], gpu_name: str | None, liger: LigerGrpoLoss | None = None) -> MemoryEstimate:
    """One MemoryEstimate over every moment (so the one verdict judges it): each phase the largest of its
    moments; at the peak, the parts live at the peak's moment (they sum to the allocated peak)."""
    phases: dict[str, int] = {}
    for label, parts in moments:
        name = label.split()[0]
        phases[name] = max(phases.get(name, 0), sum(parts.values()))
    live = max((parts for _, parts in moments), key=lambda parts: sum(parts.values()))
    allocated = sum(live.values())
    # vLLM's share is its own pool, sized by its fraction: no reserve on it
    share = added["weights"] - ref + added["activations"]
    extra = process_runtime(training.strategy, gpu_name)
    held = _torch_reserved(training, moments, ref, share, gpu_name, extra.context, liger) + share
    return replace(training, weights=training.weights + added["weights"], logits=max(p["logits"] for _, p in moments),
                   activations=max(p["activations"] for _, p in moments), temporaries=live["temporaries"],
                   phases=tuple(phases.items()), overhead=round(extra.total + held - allocated),
                   at_peak=tuple(live.items()), assumptions=training.assumptions + notes, reserved=round(held),
                   runtime_parts=tuple(extra.parts().items()),
                   moments=tuple((label, tuple(parts.items())) for label, parts in moments))
