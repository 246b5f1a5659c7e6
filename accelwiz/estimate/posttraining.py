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
* **Fused LM head** (trl/trainer/utils.py `add_fused_lm_head`, trl/kernels/chunked_logprob.py): DPO and GRPO call
  the model with `fused_lm_head=True`, which never materialises the `[tokens, vocab]` logits. It projects
  through the head in tiles of one buffer, `min(N, 4096) × 32768` in the compute dtype (N: the scored positions,
  only the completion tokens where Triton runs), keeps a per-token log-sum-exp for backward, and recomputes the
  tiles there. The SFT loss tail of estimate_memory (fp32 log-softmax, loss gradients) is replaced by that
  buffer, in the policy's forward, in the reference forward (which runs while the policy's activations are
  kept) and at the start of backward. Measured against a trace of the real DPOTrainer step
  (tests/posttraining/test_posttraining_trace.py).
* **Generation** (GRPO): HF `generate` keeps a KV cache of `2 × layers × kv_heads × head_dim × 2 bytes` per
  token for prompt + completion of every sequence; under ZeRO-3 `ds3_gather_for_generation` (default true)
  gathers the whole 16-bit model on every GPU first. vLLM colocate reserves `vllm_gpu_memory_utilization` of
  each GPU's *total* memory in the training process (vllm_generation.py: `LLM(gpu_memory_utilization=...)`);
  vLLM server runs on GPUs of its own, which training then does not have (vllm_kv.py for vLLM's blocks).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from accelwiz.estimate.activations import logits_bytes, loss_transient_bytes, recompute_bytes
from accelwiz.estimate.memory import MemoryEstimate, estimate_memory, process_runtime
from accelwiz.estimate.reserve import reserved_bytes
from accelwiz.estimate.states import optimizer_step_temporaries
from accelwiz.estimate.step_phases import tied_embedding_gradients  # backward's end, as estimate_memory's
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.vllm_kv import VllmCache, kv_bytes_per_token, vllm_cache
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import GIB

Kind = Literal["sft", "dpo", "grpo"]
Generation = Literal["hf", "vllm-colocate", "vllm-server"]
KINDS: tuple[str, ...] = ("sft", "dpo", "grpo")
FUSED_TOKENS = 4096  # chunked_logprob.TOKEN_CHUNK_SIZE
FUSED_VOCAB = 32768  # trainer/utils._CHUNKED_LOGPROB_CHUNK_SIZE
GENERATIONS: tuple[str, ...] = ("hf", "vllm-colocate", "vllm-server")


@dataclass(frozen=True)
class PostTraining:
    """The few TRL settings that decide memory (names as in DPOConfig/GRPOConfig)."""

    kind: Kind = "sft"
    max_prompt_length: int = 512
    max_completion_length: int = 512  # GRPOConfig's default
    num_generations: int = 8  # GRPOConfig's default
    steps_per_generation: int = 1  # GRPOConfig: the accumulation when unset
    beta: float | None = None  # None: the trainer's default (DPO 0.1, GRPO 0.0)
    precompute_ref_log_probs: bool = False  # DPOConfig
    generation: Generation = "hf"
    vllm_gpu_memory_utilization: float = 0.3  # GRPOConfig's default (colocate)
    vllm_tensor_parallel_size: int = 1
    vllm_server_gpus: int = 1  # GPUs a `trl vllm-serve` takes (its tensor × data parallel size)
    vllm_max_model_length: int | None = None  # None: the model's max_position_embeddings
    ds3_gather_for_generation: bool = True

    @property
    def sequence(self) -> int:
        return self.max_prompt_length + self.max_completion_length

    @property
    def effective_beta(self) -> float:
        return self.beta if self.beta is not None else (0.1 if self.kind == "dpo" else 0.0)


@dataclass(frozen=True)
class GenerationEstimate:
    """GRPO's generation phase on one training GPU, and what vLLM needs where it runs."""

    mode: Generation
    sequences: int  # completions one process generates at once
    tokens_per_sequence: int
    kv_cache_bytes: int  # HF generate's cache on the training GPU (0 for vLLM)
    gathered_bytes: int  # ZeRO-3: the 16-bit model gathered for generation, beyond the shard
    reserved_bytes: int  # vLLM colocate: its share of the GPU (0 when no GPU size is known)
    vllm: VllmCache | None = None
    server_gpus: int = 0


@dataclass(frozen=True)
class PostTrainingEstimate:
    settings: PostTraining
    training: MemoryEstimate  # the TRL step alone, as estimate_memory sees it
    reference_bytes: int  # per GPU
    reference_note: str
    generation: GenerationEstimate | None
    combined: MemoryEstimate  # every phase (training + reference, log-prob pass, generation): what is judged
    notes: tuple[str, ...] = field(default=())


def training_workload(workload: Workload, post: PostTraining) -> Workload:
    """The sequences one training micro-step runs: DPO's chosen and rejected together, prompt + completion."""
    if post.kind == "sft":
        return workload
    batch = workload.micro_batch * (2 if post.kind == "dpo" else 1)
    loaded = {}
    if workload.regime == "lora" and workload.precision == "mixed" and workload.base_dtype is None:
        # accelwiz's DPO/GRPO run hands TRL the checkpoint's path (trainer/trl_run.py), and TRL 1.16 loads a
        # model named by string in float32 (create_model_from_path): the frozen base is fp32, not the built-in
        # trainer's 16-bit one (estimate/states.py `frozen_base_width`)
        loaded = {"base_dtype": "fp32", "kbit_prepared": False}
    return replace(workload, micro_batch=batch, seq_len=post.sequence, **loaded)


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


def fused_head_buffer(step: Workload, post: PostTraining, *, compact: bool = True) -> int:
    """The fused LM head's tile buffer: `min(N, 4096) × 32768` in the compute dtype. `compact` (Triton, CUDA):
    N counts the completion positions only; else every position of every sequence."""
    positions = step.micro_batch * (post.max_completion_length if compact else step.seq_len)
    width = 4 if step.precision == "fp32" else 2
    return min(positions, FUSED_TOKENS) * FUSED_VOCAB * width


def fused_head_phases(step: Workload, strategy: Strategy, training: MemoryEstimate,
                      tile: int) -> list[tuple[str, int]]:
    """estimate_memory's phases with the SFT loss tail replaced by the fused head's tile buffer.

    Forward and the start of backward hold the same tensors but for the loss tail, so both become the forward
    without it plus the tile; the other backward moments (a checkpointed layer's recomputation, the end with
    all gradients) and the optimizer step do not involve the head and keep their estimate_memory values.
    """
    phases = dict(training.phases)
    logits = logits_bytes(step)
    loss_forward, _ = loss_transient_bytes(step)
    forward = phases["forward"] - logits - loss_forward + tile
    autocast = step.precision == "mixed" and strategy.kind in ("single", "ddp")
    recompute = phases["forward"] - logits - loss_forward + recompute_bytes(step, autocast=autocast)
    step_temporaries, _ = optimizer_step_temporaries(step, strategy)
    end = phases["optimizer"] - step_temporaries + tied_embedding_gradients(step, strategy)
    backward = max(forward, recompute, end)
    loading = [("loading", phases["loading"])] if "loading" in phases else []  # before the first step: unchanged
    return [*loading, ("forward", round(forward)), ("backward", round(backward)),
            ("optimizer", phases["optimizer"])]


def estimate_posttraining(workload: Workload, strategy: Strategy, post: PostTraining,
                          gpu_bytes: int | None = None, *, compact: bool = True,
                          gpu_name: str | None = None) -> PostTrainingEstimate:
    """Per-GPU peak over the TRL step, the log-prob pass and generation, for `workload` under `strategy`.

    `workload.micro_batch` is TRL's `per_device_train_batch_size` (pairs for DPO, completions for GRPO);
    `gpu_bytes` (one GPU's memory) sizes vLLM colocate's share; `gpu_name`, when known, the runtime beside the
    tensors (as estimate_memory).
    """
    step = training_workload(workload, post)
    training = estimate_memory(step, strategy, gpu_name)
    ref, ref_note = reference_bytes(workload, strategy, post)
    notes = [ref_note] if ref_note else []
    phases = list(training.phases)
    if post.kind != "sft":
        tile = fused_head_buffer(step, post, compact=compact)
        phases = fused_head_phases(step, strategy, training, tile)
        notes.append(f"TRL's fused LM head: no [tokens × vocab] logits, a {tile / 2**20:.0f} MiB tile buffer "
                     "instead of the loss tail above")
    phases = [(name, value + ref) for name, value in phases]
    if post.kind == "dpo":
        notes.append(f"DPO: chosen and rejected in one forward: {step.micro_batch} sequences of "
                     f"{post.max_prompt_length} + {post.max_completion_length} tokens per micro-step")
    generation = None
    if post.kind == "grpo":
        generation = _generation(workload, strategy, post, training, gpu_bytes)
        resident = _resident(training)
        logprob = resident + ref + _logprob_transient(step, post)
        phases.append(("logprob", round(logprob)))
        if generation.mode != "vllm-server":
            phases.append(("generation", round(resident + ref + generation.kv_cache_bytes
                                                + generation.gathered_bytes)))
        if generation.reserved_bytes:  # vLLM's share stays allocated through every phase
            phases = [(name, value + generation.reserved_bytes) for name, value in phases]
        notes += _generation_notes(generation, post)
    reserved = generation.reserved_bytes if generation is not None else 0
    combined = _combined(training, phases, ref, notes, reserved, gpu_name)
    return PostTrainingEstimate(post, training, ref, ref_note, generation, combined, tuple(notes))


def _resident(training: MemoryEstimate) -> float:
    """What stays allocated between steps: weights, optimizer states, DeepSpeed's gradient partitions,
    communication buffers."""
    kept_gradients = training.gradients if training.strategy.is_deepspeed else 0
    return training.weights + training.optimizer_states + kept_gradients + training.buffers


def _logprob_transient(step: Workload, post: PostTraining) -> float:
    """The no-grad pass over the completions (old and reference log-probs), one micro-batch at a time: 16-bit
    logits of the completion positions (`logits_to_keep`) and their fp32 log-softmax."""
    return step.micro_batch * post.max_completion_length * step.model.vocab_size * (2 + 4)


def _generation(workload: Workload, strategy: Strategy, post: PostTraining, training: MemoryEstimate,
                gpu_bytes: int | None) -> GenerationEstimate:
    spec = workload.model
    sequences = workload.micro_batch * post.steps_per_generation
    if post.generation == "hf":
        cache = sequences * post.sequence * kv_bytes_per_token(spec, 2)
        gathered = 0
        if strategy.kind == "zero3" and post.ds3_gather_for_generation:
            gathered = round(2 * spec.num_parameters * (1 - 1 / strategy.world_size))
        return GenerationEstimate("hf", sequences, post.sequence, cache, gathered, 0)
    # vLLM: TRL passes max_num_seqs = per_device_train_batch_size × tensor parallel × steps_per_generation
    max_num_seqs = workload.micro_batch * post.vllm_tensor_parallel_size * post.steps_per_generation
    max_model_len = post.vllm_max_model_length or spec.max_position_embeddings
    if post.generation == "vllm-colocate":
        reserved = round(post.vllm_gpu_memory_utilization * gpu_bytes) if gpu_bytes else 0
        cache = vllm_cache(spec, gpu_bytes, post.vllm_gpu_memory_utilization, post.vllm_tensor_parallel_size,
                           max_num_seqs, max_model_len, post.sequence) if gpu_bytes else None
        return GenerationEstimate("vllm-colocate", sequences, post.sequence, 0, 0, reserved, cache)
    # `trl vllm-serve`: its own GPUs, 0.9 of each by default (trl/scripts/vllm_serve.py)
    cache = vllm_cache(spec, gpu_bytes, 0.9, post.vllm_server_gpus, max_num_seqs, max_model_len,
                       post.sequence) if gpu_bytes else None
    return GenerationEstimate("vllm-server", sequences, post.sequence, 0, 0, 0, cache, post.vllm_server_gpus)


def _generation_notes(generation: GenerationEstimate, post: PostTraining) -> list[str]:
    notes = [f"GRPO: {generation.sequences} completions generated per process at once "
             f"(per_device_train_batch_size × steps_per_generation {post.steps_per_generation}), "
             f"{post.max_prompt_length} + {post.max_completion_length} tokens each"]
    if generation.mode == "hf":
        notes.append(f"generation (HF generate): KV cache {generation.kv_cache_bytes / GIB:.2f} GiB"
                     + (f", ZeRO-3 gathers the 16-bit model for it (+{generation.gathered_bytes / GIB:.2f} GiB)"
                        if generation.gathered_bytes else ""))
    elif generation.mode == "vllm-colocate":
        notes.append(f"generation (vLLM colocate): vLLM holds {post.vllm_gpu_memory_utilization:.0%} of each "
                     "GPU's total memory in the training process" + (
                         f" ({generation.reserved_bytes / GIB:.2f} GiB)" if generation.reserved_bytes
                         else " (no GPU size given: not counted)"))
    else:
        notes.append(f"generation (vLLM server): {generation.server_gpus} GPU(s) run `trl vllm-serve` and are "
                     "not training GPUs")
    if generation.vllm is not None:
        notes.append(generation.vllm.describe())
    notes.append("log-prob pass: no-grad forward per micro-batch over the completion positions")
    return notes


def _combined(training: MemoryEstimate, phases: list[tuple[str, int]], ref: int, notes: list[str],
              reserved: int = 0, gpu_name: str | None = None) -> MemoryEstimate:
    """One MemoryEstimate over every phase (so the one verdict judges it), the reference counted as weights."""
    allocated = max(value for _, value in phases)
    strategy = training.strategy
    # the allocator's reserve on the torch tensors (reserve.py: weights and optimizer states at their size);
    # vLLM's share is its own pool, sized by its fraction: no reserve on it
    static = training.weights + ref + training.optimizer_states
    torch_reserved, _ = reserved_bytes(allocated - reserved, static, training.workload)
    held = torch_reserved + reserved
    extra = process_runtime(strategy, gpu_name)
    overhead = extra.total + held - allocated
    peak = max(phases, key=lambda item: item[1])[0]
    parts = {"weights": training.weights + ref, "optimizer_states": training.optimizer_states,
             "buffers": training.buffers}
    if training.strategy.is_deepspeed or peak in ("backward", "optimizer"):
        parts["gradients"] = training.gradients
    rest = {"forward": "activations", "backward": "activations", "optimizer": "temporaries"}.get(peak, peak)
    parts[rest] = allocated - sum(parts.values())
    if parts[rest] < 0 and "gradients" in parts:
        # a peak in the backward comes before the last gradients exist: only part of them is live at it
        parts["gradients"] += parts[rest]
        parts[rest] = 0
    return replace(training, weights=training.weights + ref, logits=0, phases=tuple(phases), overhead=round(overhead),
                   at_peak=tuple(parts.items()), assumptions=training.assumptions + tuple(notes),
                   reserved=round(held), runtime_parts=tuple(extra.parts().items()))
