"""GRPO's generation phase on a training GPU (TRL 1.16, trl/trainer/grpo_trainer.py, vllm_generation.py).

HF `generate` keeps a KV cache of `2 × layers × kv_heads × head_dim × 2 bytes` per token for prompt + completion
of every sequence; under ZeRO-3 `ds3_gather_for_generation` (default true) gathers the whole 16-bit model on every
GPU first. vLLM colocate reserves `vllm_gpu_memory_utilization` of each GPU's *total* memory in the training
process (`LLM(gpu_memory_utilization=...)`); vLLM server runs on GPUs of its own, which training then does not
have (vllm_kv.py for vLLM's blocks). posttraining.py adds this phase to the training step's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.estimate.posttraining_settings import Generation, PostTraining
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.vllm_kv import VllmCache, kv_bytes_per_token, vllm_cache
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec


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


def grpo_generation(workload: Workload, strategy: Strategy, post: PostTraining,
                    gpu_bytes: int | None) -> GenerationEstimate:
    """GRPO's generation on one training GPU (module docstring); `gpu_bytes` sizes vLLM's share and cache."""
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


def kv_cache_stream(spec: ModelSpec, sequences: int, prompt: int, completion: int, width: int = 2) -> Iterator[int]:
    """The bytes of each tensor HF generate's DynamicCache allocates, in order: at each of the `completion`
    forwards (the prompt's prefill, then one token), every layer's `update` concatenates its keys, then its values,
    with the new positions (`torch.cat([self.keys, key_states], dim=-2)`): a new `[sequences, kv_heads, length,
    head_dim]` tensor one position longer than the one it replaces, which is then freed (benchmarks/
    grpo_liger_replay.py replays it)."""
    for step in range(completion):
        length = prompt + step
        for _ in range(spec.num_layers):
            yield from (sequences * spec.num_kv_heads * length * spec.head_dim * width,) * 2


def generation_notes(generation: GenerationEstimate, post: PostTraining) -> list[str]:
    notes = [f"GRPO: {generation.sequences} completions generated per process at once "
             f"(per_device_train_batch_size × steps_per_generation {post.steps_per_generation}), "
             f"{post.max_prompt_length} + {post.max_completion_length} tokens each"]
    if generation.mode == "hf":
        gathered = generation.gathered_bytes / GIB
        notes.append(f"generation (HF generate): KV cache {generation.kv_cache_bytes / GIB:.2f} GiB (at the peak: "
                     "activations)" + (f", ZeRO-3 gathers the 16-bit model for it (+{gathered:.2f} GiB, at the peak: "
                                       "buffers)" if gathered else ""))
    elif generation.mode == "vllm-colocate":
        notes.append(f"generation (vLLM colocate): vLLM holds {post.vllm_gpu_memory_utilization:.0%} of each "
                     "GPU's total memory in the training process" + (
                         f" ({generation.reserved_bytes / GIB:.2f} GiB)" if generation.reserved_bytes
                         else " (no GPU size given: not counted)"))
        if kept := vllm_weights(generation):
            notes.append(f"vLLM's share at every moment: its 16-bit weights ({kept / GIB:.2f} GiB) count as weights, "
                         f"the rest (KV cache, its forward's room: {(generation.reserved_bytes - kept) / GIB:.2f} GiB) "
                         "as activations")
    else:
        notes.append(f"generation (vLLM server): {generation.server_gpus} GPU(s) run `trl vllm-serve` and are "
                     "not training GPUs")
    if generation.vllm is not None:
        notes.append(generation.vllm.describe())
    notes.append("log-prob pass: no-grad forward per micro-batch over the completion positions (its logits and "
                 "log-softmax: step temporaries)")
    return notes


def vllm_weights(generation: GenerationEstimate) -> int:
    """vLLM colocate's 16-bit weights inside its share of the training GPU (0 without a share)."""
    if not generation.reserved_bytes or generation.vllm is None:
        return 0
    return min(generation.vllm.weights, generation.reserved_bytes)
