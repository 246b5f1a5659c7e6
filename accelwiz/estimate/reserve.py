"""What the caching allocator reserves at the step's peak: the analytic allocated figure, scaled as the replays teach.

The trace's allocation stream replayed through the caching-allocator model (allocator.py) gives the reserved
peak of a real step; benchmarks/allocator_replay.py does it for a matrix of models and settings and writes
benchmarks/results/allocator_replay.json. What it shows:

* the static bytes (parameters, buffers, optimizer states: allocated once, each in a segment of its own
  size) cost nothing beyond their size;
* the step's dynamic bytes (activations, the loss tail, gradients, autocast copies, temporaries,
  communication buffers) are reserved at a ratio that depends on the training method and on gradient
  checkpointing (the recomputation frees and re-allocates every layer's tensors in a different order,
  leaving more cached blocks that the next request does not fit).

`DYNAMIC_RATIO` is the median of the replays' ratio (reserved − static) / (allocated − static) per group, as
the benchmark prints it (33 replays, 8 of them of settings an H200 measured, whose real reserve the replay matches
within 1.2%; four of those are Qwen2.5, Mistral and Phi-3, added when the H200 showed the Llama/GPT-2 medians
under-estimating them; Gemma-2's eager trace allocates in another order than the GPU, 8% under its real reserve,
and is left out); tests/estimate/test_reserve.py checks the table against the results file. The upper quartile
was tried: against the H200's first 18 settings its worst under-estimate is -2.6% where the median's is -5.8%,
but it judged a thread-corpus config that trains (open-r1#506) "does not fit": a false error is the other
failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.fsdp_reserve import BEYOND_WRAP_CACHE, FSDP_DYNAMIC_RATIO

if TYPE_CHECKING:
    from accelwiz.estimate.fsdp_reserve import FsdpReserve
    from accelwiz.estimate.workload import Workload

# (full fine-tuning or adapters, gradient checkpointing) -> median replayed dynamic ratio, over the replays whose
# peak is in forward or backward
DYNAMIC_RATIO: dict[tuple[str, bool], float] = {
    ("full", False): 1.142,
    ("full", True): 1.348,
    ("adapters", False): 1.100,
    ("adapters", True): 1.262,
}
# Full fine-tuning whose peak is the optimizer step (short sequences: the gradients and AdamW's foreach temporary
# outweigh the activations): the step's tensors are cut from what a backward left fragmented, with or without
# checkpointing, so one group whatever the checkpointing (7 replays: 1.108-1.639). Before it, the checkpointed
# group's ratio was applied to such steps: `--gradient-checkpointing` raised qwen2.5-7b's one-GPU estimate at 512
# tokens from 150.7 to 168.9 GiB, where checkpointing cannot add to a step that holds no activations.
STEP_PEAK_RATIO = 1.438
# `expandable_segments:True` (Workload.expandable_segments): the same traced steps' streams replayed again with one
# segment per pool and stream that grows by pages (allocator_expandable.py), the medians of the same groups
# (benchmarks/allocator_replay.py's "expandable" table). Freed blocks merge across what would have been segments of
# their own, so every group's median is lower; not every replay: a freed block merged with its neighbours is then
# carved by smaller requests, where a segment of its own would have waited for the next request of its size (gpt2
# full mixed b4xs512: step 2's backward finds no hole for its 392.6 MiB fp32 logits gradient, the largest free block
# 196.3 MiB, and maps 400 MiB more: 4.58 against 4.42 GiB); the table keeps what the replays give.
EXPANDABLE_DYNAMIC_RATIO: dict[tuple[str, bool], float] = {
    ("full", False): 1.091,
    ("full", True): 1.270,
    ("adapters", False): 1.089,
    ("adapters", True): 1.182,
}
# the step's gradients and foreach temporary mapped at the segment's end or cut from what backward freed, merged:
# 1.004-1.220 over the same 7 replays (1.108-1.639 in segments of their own)
EXPANDABLE_STEP_PEAK_RATIO = 1.029


def group(workload: Workload) -> tuple[str, bool]:
    """The replay group of a workload: LoRA and QLoRA both train adapters on a frozen base."""
    return ("full" if workload.regime == "full" else "adapters", workload.gradient_checkpointing)


def reserved_bytes(allocated: float, static: float, workload: Workload, step_segments: float = 0.0,
                   fsdp: FsdpReserve | None = None, before_step: float | None = None,
                   step_peak: bool = False) -> tuple[float, str]:
    """The reserved peak for an allocated peak of which `static` bytes are allocated once, and a note.

    `step_segments`: DeepSpeed's flat step buffers (states.py `_deepspeed_step_temporaries`), `before_step` the
    allocated peak of loading, forward and backward. Each buffer is larger than any block forward and backward
    cached, so the first step takes new segments for them beside what those phases reserved; they stay reserved
    and the next steps' activations are cut from them. The reserve is counted once: what forward and backward
    reserved plus the step's segments, never the step's allocated peak (which holds them already) plus them again. The allocator's own event stream on an H200 (ZeRO-2,
    Llama-3.2-1B, one rank, tests/fixtures/allocator_streams/10): 20.04 GiB reserved when the first step starts,
    then four 4.61 GiB segments (the fp32 gradient copy, Adam's m and v, the foreach temporary), 38.46 GiB.
    `step_peak`: the optimizer step is the allocated peak (full fine-tuning: `STEP_PEAK_RATIO`). With expandable
    segments the step's buffers, larger than any free block, are mapped at the end of the one segment, beside what
    forward and backward mapped: the same sum (the free tail they start in, under one 20 MiB page, is not taken off).
    """
    if fsdp is not None:
        return _fsdp_reserved(allocated, static, workload, fsdp)
    kind, checkpointing = group(workload)
    at_step = step_peak and kind == "full"
    ratio = dynamic_ratio(workload, at_step)
    # what forward and backward reserved: their allocated peak (the H200's ZeRO streams reserve it within 3%: 20.04
    # GiB for a 19.50 GiB peak when stream 10's first step starts); the step's flat buffers are never scaled
    earlier = allocated if before_step is None or not step_segments else before_step
    dynamic = max(0.0, earlier - static)
    replayed = static + ratio * dynamic
    # the larger of the two: with LoRA the step's segments are small and the activations' fragmentation, which the
    # ratio counts, is what decides (the published ZeRO-3 LoRA rows of 70B on 8 and 2 GPUs)
    if step_segments and earlier + step_segments > replayed:
        return earlier + step_segments, (
            f"allocator reserve: the peak of forward and backward ({earlier / 2**30:.2f} GiB), then DeepSpeed's "
            f"step buffers ({step_segments / 2**30:.2f} GiB) in segments of their own, kept reserved (the "
            "allocator's event stream on an H200)"
        )
    group_name = ("full fine-tuning peaking in the optimizer step" if at_step else
                  f"{kind}, {'with' if checkpointing else 'without'} gradient checkpointing")
    if workload.expandable_segments:
        group_name += "; expandable_segments:True, one segment per stream grown by pages"
    return replayed, (
        f"allocator reserve: the step's dynamic bytes ({dynamic / 2**30:.2f} GiB) x {ratio:.3f}, the median "
        f"reserved/allocated of the caching-allocator replays of traced steps ({group_name}: "
        "benchmarks/allocator_replay.py); parameters and optimizer states are reserved at their size"
    )


def dynamic_ratio(workload: Workload, at_step: bool = False) -> float:
    """The replays' median for the workload's group, from the table of the allocator it runs with; `at_step`: full
    fine-tuning peaking in the optimizer step."""
    if workload.expandable_segments:
        return EXPANDABLE_STEP_PEAK_RATIO if at_step else EXPANDABLE_DYNAMIC_RATIO[group(workload)]
    return STEP_PEAK_RATIO if at_step else DYNAMIC_RATIO[group(workload)]


def fsdp_ratio(workload: Workload) -> float:
    """The default stream's dynamic ratio under FSDP: measured where fsdp_reserve.py has it, else the replays'."""
    return FSDP_DYNAMIC_RATIO.get(group(workload), DYNAMIC_RATIO[group(workload)])


def _fsdp_reserved(allocated: float, static: float, workload: Workload, fsdp: FsdpReserve) -> tuple[float, str]:
    """FSDP (fsdp_reserve.py): its streams' pools at their size; on the default stream, the dynamic bytes at the
    FSDP ratio where measured, or, for a small step, the cache wrapping left there and the share of the step
    that still took new segments beside it, whichever is larger."""
    ratio = fsdp_ratio(workload)
    default = fsdp.default_stream(ratio)
    dynamic = f"({fsdp.dynamic / 2**30:.2f} GiB)"
    how = (f"the cache FSDP's wrapping left, and {BEYOND_WRAP_CACHE:.2f} of its dynamic bytes {dynamic} beside it"
           if default == fsdp.small_step else f"its dynamic bytes {dynamic} x {ratio:.2f}")
    # not modelled: FSDP with expandable segments (each stream's pool one growing segment); the measured streams
    # ran without them, so their figures stand and the note says so
    unmodelled = ("; expandable_segments:True is not modelled under FSDP: the default allocator's figures"
                  if workload.expandable_segments else "")
    return max(allocated, static + fsdp.pools + default), (
        f"allocator reserve: FSDP's gathered parameters and sharded gradients on streams of their own "
        f"({fsdp.pools / 2**30:.2f} GiB, reserved at their size); the default stream beyond the static bytes "
        f"{default / 2**30:.2f} GiB: {how} (the wrap leaves {fsdp.init_cache / 2**30:.2f} GiB cached; real FSDP1 "
        f"streams on an H200, fsdp_reserve.py){unmodelled}"
    )


def at_least_loading(reserved: float, notes: list[str], loading: float,
                     warmup: str | None = None) -> tuple[float, list[str]]:
    """The reserved peak once loading is counted: each tensor loading allocates (a parameter, a flat buffer) is a
    block of its own size, and what it frees (ZeRO-3 without zero.Init: the whole model once partitioned) stays
    reserved, the step's tensors cut from those blocks afterwards. The reserve is the larger of loading's
    reserve and the step's, never their sum. `loading` is loading's allocated peak, or where transformers'
    caching_allocator_warmup reserved more (loading_warmup.py), that, said by `warmup`."""
    if loading <= reserved:
        return reserved, notes
    why = warmup or f"loading's {loading / 2**30:.2f} GiB stay reserved once freed"
    return loading, [*notes, f"allocator reserve: {why}, above the step's {reserved / 2**30:.2f} GiB, which is cut "
                     "from them"]
