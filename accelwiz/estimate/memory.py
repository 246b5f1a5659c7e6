"""Training memory per GPU and per node for one workload under one strategy: pure arithmetic, frozen result.

The peak is a maximum over the phases of a training step, not one sum (the fake-tensor trace in trace.py
showed the sum over-estimating where the peak is in the optimizer step and missing the step's temporaries):

* forward: weights (with autocast's 16-bit copies), optimizer states, the activations, and the loss tail
  while log_softmax runs (activations.py);
* backward: the larger of its start (everything forward kept, plus the loss gradients), the recomputation of
  one checkpointed layer, and its end (activations freed, all gradients present; a tied embedding's two
  gradient contributions and their sum exist at once);
* optimizer step: weights, gradients, optimizer states and the step's temporaries (states.py: AdamW's
  `foreach` path allocates one parameter-sized temporary);
* before them, loading: the weights as they arrive and the loading path's transient (loading.py).

Gradients exist only from backward to the step (`zero_grad(set_to_none=True)`, torch's default since 2.0),
ZeRO-1/2's partition too (allocated at the first reduce, freed by the step), except under ZeRO-3, whose flat
gradient partition is allocated once. Communication buffers count in every phase, but ZeRO-1/2's reduce
bucket, which `backward` allocates and the step frees (both seen in the allocator's event stream on an H200).
The allocated peak is what torch.cuda.max_memory_allocated shows; the caching allocator reserves more
(reserve.py, from replays of traced allocation streams through allocator.py), and the process holds a CUDA
context, cuBLAS workspaces and NCCL buffers beside it (runtime.py): `per_gpu_total` is reserved + runtime,
what the verdict judges. Every figure carries the assumptions it rests on (`MemoryEstimate.assumptions`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from accelwiz.estimate.accumulation import with_accumulated_gradients
from accelwiz.estimate.activations import activation_bytes, logits_bytes
from accelwiz.estimate.attention_backend import on_gpu
from accelwiz.estimate.buffers import buffer_bytes
from accelwiz.estimate.fsdp_reserve import fsdp_step_reserve
from accelwiz.estimate.gpu_fit import gpu_fit
from accelwiz.estimate.host import HOST_PROCESS_BYTES, host_ram  # noqa: F401 (HOST_PROCESS_BYTES: re-exported)
from accelwiz.estimate.loading import loading_bytes, loading_resident
from accelwiz.estimate.loading_warmup import gpu_memory_bytes, loading_reserved
from accelwiz.estimate.loss_dtype import as_the_model_computes_its_loss
from accelwiz.estimate.memory_notes import PartNotes, assumptions
from accelwiz.estimate.reserve import reserved_bytes
from accelwiz.estimate.runtime import Runtime, runtime
from accelwiz.estimate.small_pool import adapter_small_pool_bytes
from accelwiz.estimate.deepspeed_step import deepspeed_step_segments
from accelwiz.estimate.states import (
    ModelStates,
    as_the_engine_trains,
    model_states,
    peft_fp32_adapters,
)
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.step_phases import Phase, StepTensors, gradients_kept, phases_of, step_moments
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.varying_lengths import cache_growth
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import zero3_kept_bytes
from accelwiz.estimate.zero3_loading_cache import reserved_beside_loading
from accelwiz.estimate.zero_flatten import ZeroFlatten, zero_flatten
from accelwiz.probe.cuda_totals import capacity_of

# What a process holds beside its tensors (CUDA context, cuBLAS workspaces, NCCL) is runtime.py's; what the
# caching allocator reserves beyond the allocated peak is reserve.py's (taught by allocator replays); the
# phases of the step are step_phases.py's, the assumptions' wording memory_notes.py's.


@dataclass(frozen=True)
class MemoryEstimate:
    strategy: Strategy
    workload: Workload
    weights: int  # parameters, plus autocast's 16-bit copies kept for backward
    gradients: int
    optimizer_states: int
    activations: int  # what the layers keep for backward at the end of forward
    logits: int  # the loss tail kept for backward (fp32 log-softmax)
    buffers: int
    overhead: int
    host_bytes: int  # per node: host RAM for offloaded states or model loading, whichever is larger
    nvme_bytes: int  # per node
    assumptions: tuple[str, ...]
    phases: tuple[tuple[str, int], ...] = ()  # (phase, bytes allocated at its peak), in step order
    temporaries: int = 0  # short-lived bytes at the peak phase (loss gradients, optimizer step, recompute)
    at_peak: tuple[tuple[str, int], ...] = ()  # what is live at the peak, by category; sums to `allocated`
    reserved: int = 0  # what the caching allocator holds at the peak (torch.cuda.max_memory_reserved)
    runtime_parts: tuple[tuple[str, int], ...] = ()  # CUDA context, cuBLAS workspaces, NCCL (runtime.py)
    # every moment of the step (step_phases.step_moments: "forward", "backward start", ...) with its live parts,
    # each summing to its total: what a post-training step reshapes (posttraining.py)
    moments: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    # bitsandbytes' paged optimizer states per GPU: CUDA managed memory, outside torch's allocator (paged_states.py)
    paged_states: int = 0
    # ZeRO-1/2: the flat 16-bit copy loading makes beside the parameters on this estimate's GPU (0 where DeepSpeed
    # flattens on the CPU), where and why (zero_flatten.py, the one owner), and the step's own reserve beside
    # loading's blocks (reserve.at_least_loading): what `with_cpu_flatten` needs for another GPU
    zero_flatten: int = 0
    step_reserved: int = 0
    # batches of varying length: what `max_memory_reserved` may grow by over a long run beyond `reserved` (which
    # counts the middle of the range), free segments the allocator releases before it fails (varying_lengths.py)
    cache_growth: int = 0
    flatten: ZeroFlatten | None = None

    @property
    def model_states(self) -> int:
        return self.weights + self.gradients + self.optimizer_states

    @property
    def peak_phase(self) -> str:
        """The phase whose peak is the step's peak: forward, backward or optimizer."""
        return max(self.phases, key=lambda item: item[1])[0] if self.phases else "backward"

    @property
    def allocated(self) -> int:
        """What `torch.cuda.max_memory_allocated` should show: the largest phase, without context or slack."""
        if self.phases:
            return max(value for _, value in self.phases)
        return self.model_states + self.activations + self.logits + self.buffers

    @property
    def runtime(self) -> int:
        """Beside the tensors: CUDA context, cuBLAS workspaces, NCCL buffers."""
        return sum(value for _, value in self.runtime_parts)

    @property
    def per_gpu_total(self) -> int:
        """What the process holds on its GPU at the peak: the reserved peak plus the runtime, and paged optimizer
        states while resident (as nvidia-smi)."""
        return self.unpaged_total + self.paged_states

    @property
    def unpaged_total(self) -> int:
        """`per_gpu_total` without the paged optimizer states: what torch's allocator and the runtime hold."""
        return self.allocated + self.overhead

    def retries_on(self, gpu_bytes: int | None) -> bool:
        """Whether a GPU of `gpu_bytes` holds the allocated peak and the runtime but not the whole reserve: the
        caching allocator then fills the GPU, and a cudaMalloc that fails makes it release its cached blocks and
        retry (c10 `release_cached_blocks`, counted in `num_alloc_retries`): slower, and tight, not out of
        memory. Answer.AI's 7B QLoRA at 10 x 2048 tokens trained on a 24 GB RTX 3090 this way."""
        needed = self.unpaged_total
        return bool(gpu_bytes) and needed > (gpu_bytes or 0) >= self.allocated + self.runtime

    def pages_out_on(self, gpu_bytes: int | None) -> bool:
        """Whether bitsandbytes' paged states do not fit beside the rest on a GPU of `gpu_bytes`: the driver then
        keeps part of them in host RAM and pages them in for each step (paged_states.py)."""
        return bool(gpu_bytes) and bool(self.paged_states) and self.per_gpu_total > (gpu_bytes or 0)

    def flattens_on_cpu(self, gpu_bytes: int | None) -> bool:
        """ZeRO-1/2 counted with its flat copy on the GPU, judged on a GPU of `gpu_bytes` that cannot hold it
        beside the loaded model: DeepSpeed then flattens on the CPU (zero_flatten.py), so loading holds one copy."""
        return self.zero_flatten > 0 and self.flatten is not None and not self.flatten.on_gpu(gpu_bytes)

    def with_cpu_flatten(self) -> MemoryEstimate:
        """This estimate with loading's flat copy made on the CPU: loading one copy lower, the reserve the larger
        of the step's and what loading then allocates."""
        phases = tuple((p, v - self.zero_flatten if p == "loading" else v) for p, v in self.phases)
        allocated = max(v for _, v in phases)
        reserved = max(self.step_reserved, dict(phases)["loading"], allocated)
        return replace(self, phases=phases, reserved=reserved, overhead=self.runtime + reserved - allocated,
                       zero_flatten=0)

    def reserved_long_run_on(self, gpu_bytes: int | None) -> int:
        """What `max_memory_reserved` may reach after a long run of batches of varying length on a GPU of
        `gpu_bytes` (unknown: None): the step's cache grows by `cache_growth` at most (cut from loading's blocks
        where those are larger), and no further than the GPU holds beside the runtime, where the allocator releases
        its free segments and retries instead."""
        grown = max(self.reserved, self.step_reserved + self.cache_growth)
        if gpu_bytes:
            grown = min(grown, max(self.reserved, int(gpu_bytes) - self.runtime - self.paged_states))
        return grown

    def need_on(self, gpu_bytes: int | None) -> int:
        """What the process will hold at its peak on a GPU of `gpu_bytes` (unknown: None): `per_gpu_total`, or
        the GPU's memory where a cache gives way (gpu_fit.py, the one owner of how an estimate meets a GPU)."""
        return gpu_fit(self, gpu_bytes).held


def estimate_memory(workload: Workload, strategy: Strategy, gpu: str | None = None,
                    capacity: int | None = None) -> MemoryEstimate:
    """Peak training memory per GPU (bytes) and per node host RAM for `workload` under `strategy` (on `gpu`,
    a GPU name, when known: the runtime beside the tensors depends on its generation; `capacity`: what CUDA can
    allocate there where the verdict knows it beyond the name, else the name's: where ZeRO-1/2 flattens)."""
    workload, engine_note = as_the_engine_trains(workload, strategy)
    workload = as_the_model_computes_its_loss(workload, strategy)
    workload = on_gpu(workload, gpu)  # the kernel SDPA picks on this GPU (attention_backend.py)
    states = with_accumulated_gradients(workload, strategy, model_states(workload, strategy))
    extra, gpu_bytes = process_runtime(strategy, gpu), gpu_memory_bytes(gpu)
    capacity = capacity or capacity_of(gpu)
    flatten = zero_flatten(workload, strategy, loading_resident(states), extra.context + extra.nccl)
    tensors, notes = _step_tensors(workload, strategy, states, flatten, capacity)
    moments = step_moments(workload, strategy, states, tensors)
    phases = phases_of(moments)
    peak = max(phases, key=lambda p: p.total)
    allocated = peak.total
    step_reserved, reserve_notes = _reserved(workload, strategy, states, phases)
    # transformers' caching_allocator_warmup: the block from_pretrained reserves before loading (loading_warmup.py)
    loading, warmup_note = loading_reserved(workload, phases[0].total, gpu_bytes, extra.context, strategy)
    # batches of varying length, less what the warmup block leaves free (varying_lengths.py)
    expected, bound, growth_note = cache_growth(workload, loading if warmup_note else 0.0)
    step_reserved += expected
    # loading's blocks: given back, cut from, or (ZeRO-3 offloading a model built outside zero.Init) kept beside
    # ZeRO-3's own streams (zero3_loading_cache.py)
    reserved, reserve_notes = reserved_beside_loading(workload, strategy, step_reserved, reserve_notes, loading,
                                                      warmup_note)
    reserve_notes = [*reserve_notes, *((growth_note,) if growth_note else ())]
    overhead = extra.total + (reserved - allocated)
    host, nvme, host_notes = _host(workload, strategy, states.host_offload)
    said = PartNotes(engine_note, notes["activations"], notes["buffers"], notes["step"], tuple(reserve_notes),
                     tuple(extra.notes), notes["loading"], tuple(host_notes))
    return MemoryEstimate(
        strategy, workload, round(states.weights), round(states.gradients), round(states.optimizer_states),
        tensors.activations, tensors.logits, round(tensors.buffers), round(overhead), round(host), round(nvme),
        assumptions(workload, strategy, states, tensors.logits, phases, peak, said),
        tuple((p.name, round(p.total)) for p in phases), round(peak.parts["temporaries"]),
        _rounded_parts(peak.parts, allocated), round(reserved), tuple(extra.parts().items()),
        tuple((m.label, _rounded_parts(m.parts, m.total)) for m in moments), round(states.paged),
        round(flatten.gpu_bytes(capacity)) if flatten else 0, round(step_reserved), round(bound - expected),
        flatten,
    )


def _step_tensors(workload: Workload, strategy: Strategy, states: ModelStates, flatten: ZeroFlatten | None,
                  capacity: int | None) -> tuple[StepTensors, dict]:
    """The step's tensors besides the model states (activations, loss tail, buffers, the step's and loading's
    temporaries, ZeRO-1/2's flat copy where `flatten` puts it on a GPU CUDA gives `capacity`), and the notes each
    gave."""
    # torch.autocast over fp32 weights only where the model itself stays fp32 (DeepSpeed and FSDP cast it)
    autocast = workload.precision == "mixed" and strategy.kind in ("single", "ddp")
    # LoRA's adapters in fp32 over a bf16 base keep fp32 input copies; DeepSpeed casts them to 16-bit
    activations, activation_notes = activation_bytes(
        workload, autocast=autocast, fp32_adapters=peft_fp32_adapters(workload, strategy), strategy=strategy)
    buffers, buffer_notes = buffer_bytes(workload, strategy)
    turn, recomputing, turn_note = zero3_kept_bytes(workload, strategy)
    step, step_note = optimizer_step_temporaries(workload, strategy)
    loaded, loading_note = loading_bytes(workload, strategy, states, flatten, capacity)
    tensors = StepTensors(activations, logits_bytes(workload, autocast=autocast), buffers, autocast, step, loaded,
                          turn, recomputing)
    notes = {"activations": tuple(activation_notes), "buffers": (*buffer_notes, *((turn_note,) if turn_note else ())),
             "step": step_note, "loading": loading_note}
    return tensors, notes


def _reserved(workload: Workload, strategy: Strategy, states: ModelStates,
              phases: tuple[Phase, ...]) -> tuple[float, list[str]]:
    """What the caching allocator reserves for the step (reserve.py, fsdp_reserve.py, small_pool.py), and notes;
    loading's blocks are weighed beside it by the caller (zero3_loading_cache.py `reserved_beside_loading`)."""
    peak = max(phases[1:], key=lambda p: p.total)
    # accelerate's no_sync under FSDP: each unit's unsharded gradient, allocated at its size once per step and kept
    # until the last micro-batch reduce-scatters it (accumulation.py): static blocks, not the default stream's churn
    unsharded = states.accumulating if strategy.is_fsdp else 0.0
    static = peak.parts["optimizer_states"] + (states.weights - states.autocast_copy) + unsharded
    if gradients_kept(workload, strategy):  # gradients allocated once, kept between steps
        static += peak.parts["gradients"]
    step_segments = deepspeed_step_segments(workload, strategy)  # flat buffers: segments of their own (reserve.py)
    fsdp = None
    if strategy.is_fsdp:  # FSDP's streams hold their blocks at their size; wrapping leaves a cache (fsdp_reserve.py)
        fsdp = fsdp_step_reserve(workload, strategy, static=static, gradients=states.gradients,
                                 phases=[(p.total, max(0.0, p.parts["gradients"] - unsharded)) for p in phases])
    before_step = max(p.total for p in phases[1:] if p.name != "optimizer")
    reserved, note = reserved_bytes(peak.total, static, workload, step_segments, fsdp, before_step,
                                    step_peak=peak.name == "optimizer")
    # never below the allocated peak: DeepSpeed's step also flattens its gradients into a 16-bit buffer, which
    # takes a block forward and backward freed where one is large enough, or a segment of its own where none is
    reserved = max(reserved, peak.total)
    small_pool, small_pool_note = adapter_small_pool_bytes(workload, strategy, peak.name)
    return reserved + small_pool, [note, *((small_pool_note,) if small_pool_note else ())]


def process_runtime(strategy: Strategy, gpu: str | None = None) -> Runtime:
    """The runtime beside the tensors of one process of `strategy` (runtime.py), on `gpu` if known."""
    stage = int(strategy.kind[-1]) if strategy.is_deepspeed else None
    return runtime(strategy.world_size, strategy.nodes, gpu, deepspeed_stage=stage)


def _rounded_parts(parts: dict[str, float], total: float) -> tuple[tuple[str, int], ...]:
    """Round each category and put the rounding remainder on the largest, so the parts sum to the total."""
    rounded = {key: round(value) for key, value in parts.items()}
    largest = max(rounded, key=lambda key: rounded[key])
    rounded[largest] += round(total) - sum(rounded.values())
    return tuple(rounded.items())


def _host(workload: Workload, strategy: Strategy, offloaded: float) -> tuple[float, float, list[str]]:
    """Host RAM per node (loading peak or offloaded states, whichever is larger) and NVMe bytes per node."""
    return host_ram(workload, strategy, offloaded)
