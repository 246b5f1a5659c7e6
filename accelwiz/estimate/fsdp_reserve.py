"""What FSDP adds to the caching allocator's reserve: pools on streams of its own, and the cache wrapping leaves.

Read from the real allocator's event streams on an H200, rank 0 of two under torch's fake process group
(tests/fixtures/allocator_streams/fsdp1: Answer.AI's train.py, benchmarks/gpu_fsdp_answerai.py, and accelerate's
FSDP1/FSDP2 path, benchmarks/gpu_fsdp_accelerate.py; replayed per stream by benchmarks/fsdp_streams.py, which
writes benchmarks/results/fsdp_streams.json):

* **Gathered parameters live on the unshard stream.** FSDP all-gathers a unit into a buffer allocated on its
  unshard stream (`_unshard` runs under `stream(unshard_stream)`), and a cached block is only offered to the
  stream that made it. The current and the prefetched block (`limit_all_gathers` keeps two in flight) and the
  root unit (kept gathered from forward to backward) are cut from segments of exactly their size, reused
  every step: that pool is reserved at its size (1.27 GiB reserved for 1.24 GiB gathered, Llama-2-7B LoRA),
  and the default stream's activations never use it.
* **Sharded gradients live on the post-backward stream** (the reduce-scatter's output), and with full
  fine-tuning the unit being reduced, cast to the fp32 reduce dtype (`fsdp_reduce_bytes`): same sizes every
  step, reserved at their size. Each stream keeps its own largest, whenever in the step it was reached: the
  gradients' pool is full at backward's end, the default stream's at the loss, and both stay reserved.
* **Wrapping leaves a cache behind on the default stream.** Each unit is moved to the GPU unsharded,
  flattened into a new flat parameter and sharded by a copy; the unsharded tensors are freed into the cache,
  the largest unit (the root: embeddings and LM head) last. After wrapping, the H200 held 1.71 GiB cached
  beyond the allocated bytes for Llama-2-7B LoRA in bf16 (2 x (500 + 386) MiB = 1.73 GiB) and 1.25 GiB for
  QLoRA (2 x (500 + 96.5) MiB = 1.17 GiB); FSDP2, which shards each parameter in place, 1.74 GiB for the fp32
  LoRA model (one copy: 1.73). The step's activations are cut from that cache before new segments are taken,
  but not all of them: a small step still took 0.26-0.65 of its dynamic bytes in new segments beside it
  (median `BEYOND_WRAP_CACHE`; its blocks are few and large, and requests up to 1 MiB go to the small pool,
  which the wrap left nothing in). A batch of one at 512 tokens reserved 2.13 GiB beyond the static bytes,
  1.71 of it the wrap's.
* **The default stream's fragmentation** for adapters with checkpointing is higher than a single GPU's for
  the same step: (reserved − static) / (allocated − static) over its own blocks is 1.15-1.52 (median
  `FSDP_DYNAMIC_RATIO`), against 1.31 for the same Llama-2-7B LoRA step on one GPU without FSDP. Full
  fine-tuning's is lower than one GPU's (1.05-1.27 over eight streams, against the single-GPU replays'
  1.463: its large fp32 gradient blocks live on FSDP's streams); the estimate takes the largest.
* **FSDP1 with MixedPrecision keeps more on its side streams** (`fsdp_stream_pools`): a second root and two
  more blocks gathered, the 16-bit shard copies, and full fine-tuning's fp32 reduce copy of the largest unit.

Not modelled: FSDP1 wrapping with fp32 full fine-tuning leaves more than the two copies (5.4 GiB for a 1.5B
model whose two 1 GiB vocabulary matrices are the root, counted 2.4); it matters for small steps only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM, frozen_in_flat_gradient

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

# (full fine-tuning or adapters, gradient checkpointing) -> the default stream's dynamic ratio under FSDP, where
# measured (benchmarks/results/fsdp_streams.json); the other groups use reserve.DYNAMIC_RATIO.
# Adapters: the median over the 7 published FULL_SHARD settings whose dynamic bytes pass 1.5 x the wrap's cache.
# Full fine-tuning: the largest of 8 streams of accelerate's path (Llama-3.2-1B, 3B and Llama-2-7B; FSDP1 and
# FSDP2; 2,048 to 2 x 16,384 tokens: 1.05-1.27, `full_fine_tuning_ratios`), rounded up. The largest, not the
# median: the ratio decides when FSDP is recommended over ZeRO-3 (open-r1#506), and a recommendation that runs
# out of memory is what this estimate exists to prevent.
FSDP_DYNAMIC_RATIO: dict[tuple[str, bool], float] = {("adapters", True): 1.39, ("full", True): 1.28}

# The share of a small step's dynamic bytes taken in new segments beside the wrap's cache (the same file: median
# over the 4 published FULL_SHARD settings whose dynamic bytes are within 1.5 x that cache)
BEYOND_WRAP_CACHE = 0.53


@dataclass(frozen=True)
class FsdpReserve:
    """What FSDP's streams hold at their own size, and the cache wrapping left on the default stream."""

    pools: float  # gathered units and reduce copies + sharded gradients (FSDP's streams), each at its most
    init_cache: float  # cached on the default stream after wrapping: a floor under its dynamic reserve
    dynamic: float  # the default stream's dynamic bytes at their most (activations, loss tail, temporaries)

    @property
    def small_step(self) -> float:
        """The default stream's reserve beyond its static bytes when the wrap's cache holds most of the step."""
        return self.init_cache + BEYOND_WRAP_CACHE * self.dynamic

    def default_stream(self, ratio: float) -> float:
        """The default stream's reserve beyond its static bytes: the dynamic bytes at `ratio`, or the small
        step's, whichever is larger (reserve.py, and the trace's replay in trace_compare.py)."""
        return max(self.small_step, ratio * self.dynamic)


def fsdp_wrap_cache(workload: Workload, strategy: Strategy, root_parameters: float) -> float:
    """What wrapping leaves cached on the default stream: the root unit and one block, in the bytes they are
    moved in (fp32 under mixed precision, where FSDP casts to 16-bit only to gather; 16-bit for a bf16 model; the
    packed 4-bit storage for QLoRA's block linears), twice under FSDP1 (the moved tensors and the flat parameter
    made from them), once under FSDP2 (which shards each parameter in place)."""
    width = 2 if workload.precision == "bf16" else 4
    blocks = workload.model.num_parameters - root_parameters if strategy.fsdp_wrap == "none" else \
        workload.model.layer_parameters  # one unit (fsdp_wrap.py): every block is moved with the root
    block = blocks * (QLORA_BYTES_PER_PARAM if workload.regime == "qlora" else width)
    copies = 2 if strategy.fsdp_version == 1 else 1
    return copies * (width * root_parameters + block)


def fsdp_gathered_bytes(workload: Workload, strategy: Strategy, root_parameters: float) -> float:
    """The all-gathered parameters at the peak: the current block and the prefetched next one, and the root unit
    (what no block holds: embeddings, final norm, LM head; never quantized), which is not resharded after
    forward "with the intention that they are immediately used for backward" (torch/distributed/fsdp/
    _runtime_utils.py `_post_forward_reshard`; FSDP2: `FSDPState._lazy_init` sets the root's
    post_forward_mesh_info to None): gathered, beside its shard, from the embedding's forward to the end of
    backward. QLoRA: FSDP gathers the packed 4-bit storage (bnb's quant_storage, torchao's NF4 all-gather).
    The whole model one unit (NO_WRAP, fsdp_wrap.py): every block is the root's, gathered as long as it is."""
    if strategy.kind == "fsdp_grad_op":
        return 0.0
    width = workload.compute_width
    gathered_width = QLORA_BYTES_PER_PARAM if workload.regime == "qlora" else width
    blocks = workload.model.num_parameters - root_parameters if strategy.fsdp_wrap == "none" else \
        2 * workload.model.layer_parameters
    return gathered_width * blocks + width * root_parameters


# full fine-tuning: one unit's unsharded gradient in fp32 (the reduce dtype), counted in the allocated peak
# (buffers.py) for a block; the post-backward stream keeps a segment for the largest unit's (`fsdp_reduce_bytes`)
FSDP_UNIT_GRADIENT_BYTES = 4


def fsdp_unit_gradient_width(workload: Workload) -> int:
    """Bytes per element of a unit's unsharded gradient: fp32 over accelerate's upcast fp32 shards (the workload
    is then "mixed" or "fp32"); the shards' own 16 bits where FSDP runs outside accelerate on a bf16 model without
    a mixed-precision policy (`Strategy.fsdp_upcast` False: the workload stays "bf16")."""
    return 2 if workload.precision == "bf16" else FSDP_UNIT_GRADIENT_BYTES


def fsdp_unit_parameters(workload: Workload, strategy: Strategy) -> float:
    """Parameters of the unit whose unsharded gradient the allocated peak counts (full fine-tuning, buffers.py):
    one block; the whole model where it is one unit (NO_WRAP: its gradient is unsharded whole until the one
    reduce-scatter at backward's end)."""
    return workload.model.num_parameters if strategy.fsdp_wrap == "none" else workload.model.layer_parameters


def fsdp_unit_gradient_bytes(workload: Workload, strategy: Strategy) -> float:
    """The unit's unsharded gradient in the allocated peak: full fine-tuning's (`fsdp_unit_parameters`); with the
    whole model one unit, LoRA's too where FSDP1's use_orig_params makes one flat gradient of the adapters and
    the frozen base together (frozen_base.py `frozen_in_flat_gradient`): the whole model's, unsharded. Under
    gradient accumulation that one tensor is what no_sync keeps through every micro-batch, which accumulation.py
    counts already."""
    if strategy.fsdp_wrap == "none" and workload.gradient_accumulation > 1:
        return 0.0
    if workload.regime == "full" or (strategy.fsdp_wrap == "none" and frozen_in_flat_gradient(workload, strategy)):
        return fsdp_unit_gradient_width(workload) * fsdp_unit_parameters(workload, strategy)
    return 0.0


def fsdp_one_unit_released(workload: Workload, strategy: Strategy) -> float:
    """What the optimizer step no longer holds of the whole model one unit (buffers.py counts it in every other
    phase): backward's end reshards the root (all of it) and frees the unsharded gradient once reduce-scattered.
    Blocks: their small buffers stay counted, as before."""
    if not strategy.is_fsdp or strategy.fsdp_wrap != "none":
        return 0.0
    return fsdp_gathered_bytes(workload, strategy, fsdp_root_parameters(workload.model)) + \
        fsdp_unit_gradient_bytes(workload, strategy)


def fsdp_reduce_bytes(workload: Workload, strategy: Strategy, root_parameters: float) -> float:
    """Full fine-tuning: the segment the post-backward stream keeps for the largest unit's unsharded gradient cast
    to the fp32 reduce dtype (2004 MiB for the 525M-parameter root of an untied Llama-3.2-1B shape on the H200,
    benchmarks/results/gpu_fsdp_accelerate.jsonl). It is made at the root's reduction, at backward's end when the
    activations are gone: reserved, not in the allocated peak, where one block's is counted (buffers.py).
    Adapters: their gradients are small. The whole model one unit: its whole gradient, cast to fp32; in the bf16
    shards' own dtype (no upcast, no mixed-precision policy) nothing is cast: the reduce-scatter reads the
    gradient where autograd made it, a block of exactly the whole flat parameter's size, which the wrap left
    cached on the default stream (`fsdp_wrap_cache`) and the allocator's best fit hands back."""
    if strategy.fsdp_wrap == "none":
        whole = workload.regime == "full" or frozen_in_flat_gradient(workload, strategy)
        width = fsdp_unit_gradient_width(workload)
        return width * workload.model.num_parameters if whole and width != 2 else 0.0
    if workload.regime != "full":
        return 0.0
    largest = max(fsdp_unit_parameters(workload, strategy), root_parameters)
    return fsdp_unit_gradient_width(workload) * largest


def fsdp_stream_pools(workload: Workload, strategy: Strategy, root_parameters: float) -> float:
    """What FSDP's own streams keep reserved beyond the sharded gradients (the allocator's event streams on the
    H200, benchmarks/results/fsdp_streams.json):

    * FSDP2: the gathered units (`fsdp_gathered_bytes`): 1.2 GiB for Llama-2-7B LoRA (1.25 counted), 4.29 GiB
      with the fp32 gradient shards for a 1.5B full fine-tuning (4.0);
    * FSDP1: and, for full fine-tuning, the largest unit's fp32 reduce copy (`fsdp_reduce_bytes`); with
      MixedPrecision (fp32 parameters, 16-bit compute), segments for a second root and two more blocks on the
      unshard stream (the backward's regathers and prefetch) and the 16-bit copies of a root and a block shard on
      the pre-unshard stream: 2 x 500 + 4 x 388 MiB and 250 + 194 MiB for Llama-2-7B LoRA, 2 x 1002 + 3 x 116 MiB
      and 502 MiB for the 1.5B model."""
    pools = fsdp_gathered_bytes(workload, strategy, root_parameters)
    if strategy.fsdp_version != 1:
        return pools
    pools += fsdp_reduce_bytes(workload, strategy, root_parameters)
    if workload.precision == "mixed" and strategy.kind != "fsdp_grad_op":
        if strategy.fsdp_wrap == "none":  # one unit, never resharded before backward's end: no regather; the
            return pools + 2 * workload.model.num_parameters / strategy.shard_degree  # 16-bit copy of its shard
        root, block = 2 * root_parameters, 2 * workload.model.layer_parameters  # 16-bit
        pools += root + 2 * block + (root + block) / strategy.shard_degree
    return pools


def fsdp_step_reserve(workload: Workload, strategy: Strategy, *, static: float, gradients: float,
                      phases: list[tuple[float, float]]) -> FsdpReserve:
    """FSDP's reserve for a step whose phases allocate (total, gradients) bytes at their peaks beside `static`
    bytes: each stream's pool at its own largest, whichever phase that falls in. The default stream's dynamic
    bytes are a phase's total less the static bytes, the gathered units, one block's fp32 reduce copy (full
    fine-tuning: buffers.py counts it in every phase) and the sharded gradients (the post-backward stream's)."""
    root = fsdp_root_parameters(workload.model)
    gathered = fsdp_gathered_bytes(workload, strategy, root)
    unit_gradient = fsdp_unit_gradient_bytes(workload, strategy)
    dynamic = max(total - static - gathered - unit_gradient - grads for total, grads in phases)
    return FsdpReserve(pools=fsdp_stream_pools(workload, strategy, root) + gradients,
                       init_cache=fsdp_wrap_cache(workload, strategy, root), dynamic=max(0.0, dynamic))


def fsdp_root_parameters(spec: ModelSpec) -> float:
    """Parameters FSDP's root unit holds: every tensor outside the transformer blocks (which auto-wrap wraps)."""
    root = sum(t.numel for t in spec.tensors() if not t.module.startswith("layers."))
    return root * spec.override_scale
