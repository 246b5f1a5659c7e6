"""vLLM's KV-cache arithmetic (v1 engine), so a GRPO plan can say whether vLLM will start and how many
completions it holds at once. vLLM does not run here; this follows its source:

* `vllm/v1/kv_cache_interface.py`, `FullAttentionSpec.real_page_size_bytes`: one block of one layer is
  `block_size × num_kv_heads × (head_size + head_size_v) × dtype size` bytes (K and V); `max_memory_usage_bytes`
  is `cdiv(max_model_len, block_size)` pages per layer.
* `vllm/v1/core/kv_cache_utils.py`, `check_enough_kv_cache_memory`: vLLM refuses to start ("To serve at least
  one request with the models's max seq len ...") unless the memory left for the cache, less the one null block
  the block pool holds back, covers one request of `max_model_len` tokens.
* The memory left for the cache is `gpu_memory_utilization × total GPU memory` less the weights and the peak of
  a profiling forward (`gpu_worker.determine_available_memory`); TRL caps that profile at
  `max_num_batched_tokens=4096` (trl/generation/vllm_generation.py).
* Tensor parallelism splits the KV heads (and the weights) over its GPUs. The block size is 16 on CUDA.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelwiz.modelspec.spec import ModelSpec
from accelwiz.vocab import GIB

BLOCK_SIZE = 16
PROFILE_TOKENS = 4096  # TRL's max_num_batched_tokens for colocated vLLM


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def kv_bytes_per_token(spec: ModelSpec, width: int = 2, tensor_parallel: int = 1) -> int:
    """K and V of every layer for one token, on one GPU of a tensor-parallel group (KV heads split, at least
    one per GPU, as vLLM replicates a KV head when TP exceeds their count)."""
    heads = max(1, cdiv(spec.num_kv_heads, tensor_parallel))
    return 2 * spec.num_layers * heads * spec.head_dim * width


def page_bytes(spec: ModelSpec, width: int = 2, tensor_parallel: int = 1) -> int:
    """One block of one layer: `FullAttentionSpec.real_page_size_bytes`."""
    heads = max(1, cdiv(spec.num_kv_heads, tensor_parallel))
    return BLOCK_SIZE * heads * 2 * spec.head_dim * width


@dataclass(frozen=True)
class VllmCache:
    """vLLM's budget on one GPU and the KV cache it leaves."""

    budget: int  # utilization × GPU memory
    weights: int
    activations: int  # the profiling forward's peak (heuristic)
    cache_bytes: int  # what is left for KV blocks (may be negative)
    blocks: int  # usable blocks per layer (the null block excluded)
    max_model_len: int
    blocks_one_request: int  # what check_enough_kv_cache_memory asks for
    concurrent_sequences: int  # sequences of prompt + completion the cache holds at once
    max_num_seqs: int

    @property
    def starts(self) -> bool:
        return self.blocks >= self.blocks_one_request

    def describe(self) -> str:
        state = ("starts" if self.starts else
                 f"does NOT start: max_model_len {self.max_model_len} needs {self.blocks_one_request} blocks")
        return (f"vLLM on one GPU: budget {self.budget / GIB:.2f} GiB - weights {self.weights / GIB:.2f} GiB "
                f"- profile activations {self.activations / GIB:.2f} GiB = KV cache {self.cache_bytes / GIB:.2f} "
                f"GiB, {self.blocks} blocks of {BLOCK_SIZE} tokens; {state}; holds {self.concurrent_sequences} "
                f"completions at once (TRL asks for up to {self.max_num_seqs})")


def profile_activation_bytes(spec: ModelSpec, max_num_seqs: int, tensor_parallel: int = 1) -> int:
    """A heuristic for the profiling forward's peak: 4096 tokens through one layer's widest tensors (16-bit
    hidden states, q/k/v and the gated MLP), plus fp32 logits for the sampled sequences."""
    per_token = (4 * spec.hidden_size + 3 * spec.intermediate_size // tensor_parallel) * 2
    return PROFILE_TOKENS * per_token + max_num_seqs * spec.vocab_size * 4


def vllm_cache(spec: ModelSpec, gpu_bytes: int, utilization: float, tensor_parallel: int, max_num_seqs: int,
               max_model_len: int, tokens_per_sequence: int, width: int = 2) -> VllmCache:
    """vLLM's KV cache on one GPU of a tensor-parallel group (16-bit weights and cache)."""
    budget = round(utilization * gpu_bytes)
    weights = cdiv(width * spec.num_parameters, tensor_parallel)
    activations = profile_activation_bytes(spec, max_num_seqs, tensor_parallel)
    cache = budget - weights - activations
    page = page_bytes(spec, width, tensor_parallel) * spec.num_layers
    blocks = max(0, cache // page - 1) if cache > 0 else 0  # the block pool's null block
    per_sequence = cdiv(tokens_per_sequence, BLOCK_SIZE)
    return VllmCache(budget, weights, activations, cache, blocks, max_model_len,
                     cdiv(max_model_len, BLOCK_SIZE), blocks // per_sequence, max_num_seqs)
