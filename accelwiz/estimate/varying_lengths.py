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

How much: the growth depends on what a command line does not know, how the data's lengths spread below the cap
and how long the run is, so the estimate bounds it and takes the middle of the range. The bound,
`LOSS_TAIL_MULTIPLE` loss tails beyond the fixed step, is fitted on ms-swift's benchmark (a design source), which
reads `max_memory_reserved` after whole runs over cls-fudan-news-zh (3234 +- 2547 tokens, samples beyond
`max_length` dropped: 2.7-14.0 tails, median 7.1). Sources read after it land anywhere in the range, read from
nvidia-smi or torch alike: ms-swift's example scripts, Vertex's Falcon QLoRA (a 10-step run), GLM-4's LoRA and
AMD's Llama-2 QLoRA at its bottom (a median 2.6% from the fixed step at the cap), ms-swift's self-cognition and
Qwen1.5 best-practice pages near its top (-41% and -20% from the fixed step), torchtune's tutorials at it. A figure
in the middle (`EXPECTED_SHARE`) is wrong by at most half the range, either way, where either end can be wrong by
all of it: over eleven sources with such rows the per-source median errors are -22..+11% at the middle, -41..+3%
at the bottom and -4..+21% at the top (ms-swift's vLLM page aside: its one DDP row is -31% even at the top). The
reserve (and the total a verdict judges) counts the middle; the rest, up to the bound, is reported beside it
(`MemoryEstimate.cache_growth`, `reserved_long_run`). Grown blocks are whole free segments between steps (every
segment taken after the first steps is an fp32 loss tensor), which the allocator releases before it fails (c10
`release_cached_blocks`): a GPU that holds the step but not the grown cache is 'tight' (estimate/gpu_fit.py), never
out of memory for them. With `expandable_segments:True` the replays do not grow at all (4 layers traced, three
orders: 8.08-8.10 GiB against 8.12 fixed; a segment grows by pages at its end instead of leaving split blocks
behind). Not modelled: how many steps reach the longest length, and `torch.cuda.empty_cache()` between steps.

What loading leaves cached absorbs the growth first. The replays above allocate the weights inside the first
step; benchmarks/varying_lengths_loading.py puts the load before it (results/varying_lengths_loading.json: 4 layers
traced, 200 steps, three orders, lengths spread below the cap as ms-swift's data). For TRL's SFT notebook (Qwen3-8B
NF4 over fp16, transformers 4.57.1, batch 2 up to 1,024 tokens on an A100-40GB) the reserve grows +6.9..+16.0 GiB
over the fixed step without a load, +2.3..+4.2 after a load tensor by tensor (bitsandbytes' 16-bit copies and the
k-bit casts freed), and not at all after the warmup block (loading_warmup.py: 7.63 GiB, 4.29 GiB of it free once the
weights and casts are in; 13.50-13.52 against 13.52 fixed, the notebook printed 13.615): the step's loss tails are
cut from the block's free pieces and merge back into them, no segment of their own. So the growth is counted
beyond the bytes the warmup block leaves free (loading_warmup.py `loading_free_bytes`), only where that block
decides what loading reserves. Elsewhere nothing is taken off, which the replays allow: ms-swift's Qwen-7B QLoRA (no free block; 3.39 GiB
of copies and originals free) grows 1.8-3.9 loss tails after its load against 5.9-12.7 without, AMD's Llama-2-7B
QLoRA under 4.31 (0.91 GiB free) 5.4-9.0 either way. With samples cut at the cap rather than dropped (TRL's
truncation) most batches reach it and no variant grows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.activations import logits_bytes
from accelwiz.estimate.litgpt_model import growth_tail, runs_litgpt
from accelwiz.estimate.loading_warmup import loading_free_bytes

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

# The bound: the median over the 23 ms-swift LoRA rows (benchmarks/published/ms_swift_benchmark.py) of (measured
# reserved - the fixed-length estimate) / logits_bytes, on the tree before this module: 2.7-14.0, median 7.11.
LOSS_TAIL_MULTIPLE = 7.1
# Where in [0, the bound] a run lands is not known from a command line: the middle (module docstring).
EXPECTED_SHARE = 0.5


def cache_growth(workload: Workload, loading_block: float = 0.0) -> tuple[float, float, str | None]:
    """What batches of varying length add to the reserve beyond the step's: the middle of the range the estimate
    counts, the bound a long run may reach (`max_memory_reserved`), and the note; (0, 0, None) for batches of one
    length (packed or padded to `--seq-len`), under `expandable_segments:True` and for models without an LM
    head. `loading_block`: what loading leaves reserved where transformers' warmup block decides it
    (loading_warmup.loading_reserved); its free bytes absorb the growth first (loading_warmup.py
    `loading_free_bytes`)."""
    if not workload.varying_lengths or workload.expandable_segments:  # one segment grows by pages: nothing left
        return 0.0, 0.0, None                                           # between blocks (module docstring)
    tail = growth_tail(workload) if runs_litgpt(workload) else logits_bytes(workload)  # LitGPT: fp32 logits
    if not tail:
        return 0.0, 0.0, None
    bound = LOSS_TAIL_MULTIPLE * tail
    expected = EXPECTED_SHARE * bound
    free = loading_free_bytes(workload, loading_block)
    # Liger's fused loss keeps its input gradient, not a log-softmax (fused_loss.py); the multiple was fitted on the
    # standard tail
    kept = "Liger input gradient" if workload.loss_kernel == "liger" else f"{workload.loss_dtype} log-softmax"
    kept = "Fabric's fp32 logits" if runs_litgpt(workload) else kept
    note = (f"batches of varying length (padded to each batch's longest, up to {workload.seq_len} tokens): the "
            f"caching allocator keeps loss-tail blocks of the lengths it saw, by 0 to +{bound / 2**30:.2f} GiB over a "
            f"run ({LOSS_TAIL_MULTIPLE} x the {tail / 2**30:.2f} GiB {kept} of the longest, as the data's lengths and "
            f"the run's length decide), the middle +{expected / 2**30:.2f} GiB")
    if free:  # the step's loss tails are cut from the warmup block's free pieces and merge back (module docstring)
        expected, bound = max(0.0, expected - free), max(0.0, bound - free)
        note += (f"; loading's warmup block leaves {free / 2**30:.2f} GiB reserved but free (its tail beyond the "
                 "weights, the 16-bit originals the k-bit casts freed), which absorbs the growth first")
    return expected, bound, (
        f"{note}: counted +{expected / 2**30:.2f} GiB, +{bound / 2**30:.2f} GiB at most, free segments the "
        "allocator releases before it fails (estimate/varying_lengths.py)"
    )
