"""Batches of varying length: what the caching allocator keeps beyond one step's reserve (issue 28, cause 4).

The estimate replays one training step at `--seq-len`. accelwiz's own trainer packs its data into windows of
exactly that length, so every step is that step. A run whose batches vary in length is not: the HF Trainer's and
TRL's default collators pad each batch to its own longest sample, and ms-swift 1.x's `data_collate_fn` does the
same (its benchmark ran batch 1: every sample at its own length, up to `max_length`). Each step then allocates
its tensors at its own length, and the caching allocator (allocator.py) keeps every block a step frees. A
shorter step is served by splitting the larger cached blocks, and the pieces left between blocks in use do not
merge back in time, so a later longer step finds no contiguous block for its [tokens x vocab] loss tensors
(16-bit logits, their fp32 copy, the log-softmax and its two gradients: the largest requests of the step) and
takes new segments: in the replays below, every segment taken after the first steps is such an fp32 loss
tensor, three at a time. `max_memory_reserved` grows by them over the first hundreds of steps;
`max_memory_allocated` stays the fixed-length step's.

Shown without a GPU (tests/estimate/test_varying_lengths.py): the fake-tensor trace's allocation stream of a
real step (trace.py) at two lengths gives every request's size as a function of the length; replayed through the
allocator model at one length the reserve is the fixed step's, at lengths drawn below it the allocated peak is
no higher and the reserve grows by several loss tails. For ms-swift's Qwen-7B LoRA at 2048 tokens (32 layers
traced, 300 steps of lengths drawn as the page's data, five orders: benchmarks/varying_lengths_replay.py,
results/varying_lengths_replay.json) the replays reserve 26.1-40.5 GiB (median 33.8) where the fixed step
reserves 19.3 and the allocated peak stays 18.5; swift measured 27.74.

How much, and why it is not in the step's reserve: the growth depends on what a command line does not know, how
the data's lengths spread below the cap and how long the run is. ms-swift's benchmark (a design source) reads
`max_memory_reserved` after whole runs over cls-fudan-news-zh (3234 +- 2547 tokens, samples beyond `max_length`
dropped, so kept lengths crowd towards the cap): 2.7-14.0 loss tails beyond the fixed step, median 7.1
(`LOSS_TAIL_MULTIPLE`, fitted there). Sources nobody fitted to did not grow so: ms-swift's own example scripts,
Vertex's Falcon QLoRA (a 10-step run), GLM-4's AdvertiseGen LoRA and AMD's Llama-2 QLoRA, all padded per batch
and read from nvidia-smi during training, are within a median 2.6% of the fixed-length step at the cap and 15-25%
under it plus 7.1 tails. And the grown blocks are not a need: they are whole free segments between steps (every
segment taken after the first steps is an fp32 loss tensor), which the allocator releases and retries before it
fails (c10 `release_cached_blocks`). So the estimate's reserve, and the verdict, are the step's at the longest
batch, and the growth is reported beside them as a bound (`MemoryEstimate.cache_growth`): what
`max_memory_reserved` may reach after a long run whose batches crowd towards the cap. With
`expandable_segments:True` the replays do not grow at all (4 layers traced, three orders: 8.08-8.10 GiB against
8.12 fixed; a segment grows by pages at its end instead of leaving split blocks behind). Not modelled: how many
steps reach the longest length, and `torch.cuda.empty_cache()` between steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.activations import logits_bytes

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# The bound: the median over the 23 ms-swift LoRA rows (benchmarks/published/ms_swift_benchmark.py) of (measured
# reserved - the fixed-length estimate) / logits_bytes, on the tree before this module: 2.7-14.0, median 7.11.
LOSS_TAIL_MULTIPLE = 7.1


def cache_growth(workload: Workload) -> tuple[float, str | None]:
    """What batches of varying length may add to `max_memory_reserved` over a long run, beyond the step's reserve,
    and its note; (0, None) for batches of one length (packed or padded to `--seq-len`) and for models without an
    LM head."""
    if not workload.varying_lengths:
        return 0.0, None
    tail = logits_bytes(workload)
    if not tail:
        return 0.0, None
    extra = LOSS_TAIL_MULTIPLE * tail
    # Liger's fused loss keeps its input gradient, not a log-softmax (fused_loss.py); the multiple was fitted on the
    # standard tail
    kept = "Liger input gradient" if workload.loss_kernel == "liger" else f"{workload.loss_dtype} log-softmax"
    return extra, (
        f"batches of varying length (padded to each batch's longest, up to {workload.seq_len} tokens): the reserve "
        f"is the step's at the longest; over a long run whose batches crowd towards the cap, the caching allocator "
        f"may keep loss-tail blocks of every length it saw, up to +{extra / 2**30:.2f} GiB more reserved "
        f"({LOSS_TAIL_MULTIPLE} x the {tail / 2**30:.2f} GiB {kept} of the longest), free segments it releases "
        "before it fails: not counted in the need (estimate/varying_lengths.py)"
    )
