"""Ground truth without a GPU: one training step of the real transformers model code under fake tensors.

`trace_training_step` builds the model from its config on the `meta` device, materialises fake `cpu`
parameters (tied weights stay one tensor; both in trace_model.py), and runs two training steps (the second
has optimizer states) under `torch._subclasses.fake_tensor.FakeTensorMode` while
`torch.distributed._tools.mem_tracker.MemTracker` counts every storage by category. Nothing is allocated, so an
8B model at 4096 tokens traces on a laptop.

The trace runs on fake *cpu* tensors because fake cuda tensors cannot run backward on a CPU-only torch. The
CPU dispatch differs from CUDA's where it matters for memory; each difference is made to behave as CUDA or
corrected here:

1. **SDPA kernel.** CPU SDPA with dropout falls back to the math kernel, which saves the s×s attention
   probabilities; CUDA's flash and memory-efficient kernels draw dropout from a seed and save only the output
   and an O(s) fp32 log-sum-exp. The traced config sets the attention dropout to 0, so CPU picks its own flash
   kernel (`_scaled_dot_product_flash_attention_for_cpu`), which saves the same tensors as CUDA's. Eager
   attention keeps its dropout (its probabilities are materialised on CUDA too). `flash` (flash-attention 2)
   is traced as sdpa: it saves the same output and log-sum-exp.
2. **Autocast op lists.** CPU autocast keeps softmax, log_softmax, layer_norm, pow, rsqrt, exp, log (and the
   rest of CUDA's fp32 list) in bf16, where CUDA autocast runs them in fp32. While a trace runs, those ops get
   an `AutocastCPU` kernel that does what CUDA's `AutocastCUDA` kernel does: cast 16-bit floating inputs to
   fp32 and run the op (`trace_autocast.cuda_autocast_on_cpu`); the registrations are removed when the trace ends. The
   MoE experts' `_grouped_mm`, which CUDA autocast casts to 16-bit and CPU autocast does not, gets the
   16-bit cast the same way.
3. **Optimizer implementation.** `torch.optim.AdamW` picks the per-tensor loop for CPU tensors and the
   multi-tensor `foreach` path on CUDA; the trace passes `foreach=True`, so its parameter-sized temporary
   (`torch._foreach_sqrt(exp_avg_sqs)`) appears as on CUDA.
4. **Dropout.** CPU dropout keeps a noise tensor of the input's dtype for backward, CUDA's fused kernel a
   1-byte mask; the trace runs CUDA's (`trace_dropout.py`).
5. **Allocator rounding.** MemTracker rounds CUDA storages up to 512 bytes and CPU storages not at all; the
   difference is bytes per tensor and is not corrected.
6. **Causal mask.** masking_utils cannot read fake position ids, takes the batch for packed sequences and builds a
   mask that a real unpadded batch does not get (so SDPA expanded grouped-query K and V); while a trace runs it
   reads them as the unpacked ids they are (`trace_mask.unpacked_positions`).

Categories: MemTracker's Parameter, Buffer, Gradient, Activation, Temp and Optstate; autocast's 16-bit copies
of the parameters (made in forward, kept for backward) are moved from Activation to their own category
(MemTracker's otherwise unused `Other`), because the analytic model counts them with the weights. The phase
of each snapshot (forward, backward, optimizer step) is set by the driving loop. Figures are of the second
step.

With `layers`, the model is traced with 1 and with `layers` transformer layers, and every figure is
extrapolated linearly to the real depth (per-layer part × layers + the rest): exact for parameters,
gradients and optimizer states, an approximation for peaks.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from accelwiz.errors import UsageError
from accelwiz.estimate.trace_autocast import cuda_autocast_on_cpu
from accelwiz.estimate.trace_model import build_model, hf_config_for, layer_count_key, materialise, prepare_config
from accelwiz.estimate.trace_result import PHASES, Snapshot, TraceResult

if TYPE_CHECKING:

    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

# Seconds per traced transformer layer per training step on one core of the reference machine (2 vCPU AMD
# EPYC, benchmarks/trace_timing.py), and the fixed cost of importing torch/transformers and building the model.
SECONDS_PER_LAYER_STEP = 0.12
SECONDS_FIXED = 6.0
DEFAULT_TIME_LIMIT = 120.0
MAX_TRACE_TOKENS = 1 << 22  # micro-batch × sequence: beyond 4M tokens per step the input itself is absurd

@dataclass(frozen=True)
class TraceSettings:
    """What is traced: the workload's batch shape, numerics, attention, checkpointing and LoRA."""

    micro_batch: int
    seq_len: int
    precision: Literal["fp32", "mixed", "bf16"] = "mixed"
    autocast_dtype: Literal["bf16", "fp16"] = "bf16"
    attention: Literal["eager", "sdpa", "flash"] = "sdpa"
    gradient_checkpointing: bool = False
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] = ()
    lora_dropout: float = 0.0
    # PEFT's adapters over a bf16 base in pure bf16 are fp32 (states.peft_fp32_adapters: its default
    # autocast_adapter_dtype=True; DeepSpeed casts them with the model)
    fp32_adapters: bool = False

    @classmethod
    def from_workload(cls, workload: Workload, strategy: Strategy | None = None) -> TraceSettings:
        """The workload's settings; under DeepSpeed or FSDP, mixed precision runs a 16-bit model (no autocast)."""
        if workload.regime == "qlora":
            raise UsageError(
                "--trace cannot trace QLoRA (bitsandbytes 4-bit kernels need a GPU)",
                hint="trace with --lora instead: the adapters, activations and logits are the same",
            )
        if workload.optimizer != "adamw":
            raise UsageError(
                f"--trace traces torch.optim.AdamW, not {workload.optimizer}", hint="pass --optimizer adamw"
            )
        if workload.modules_to_save:  # the traced model's dtypes are the adapters'; a copy keeps its original's
            raise UsageError(f"--trace does not build PEFT's modules_to_save ({', '.join(workload.modules_to_save)})",
                             hint="drop --trace (the estimate counts the copies), or drop --lora-modules-to-save")
        from accelwiz.estimate.workload import ALL_LINEAR

        lora = workload.regime == "lora"
        from accelwiz.modelspec.spec import OUTSIDE_BLOCK_TARGETS

        kinds = {t.kind for t in workload.model.all_block_linears()} | OUTSIDE_BLOCK_TARGETS
        everything = workload.lora_targets == ALL_LINEAR  # PEFT's "all-linear": () below
        engine16 = strategy is not None and (strategy.is_deepspeed or strategy.is_fsdp)
        from accelwiz.estimate.states import peft_fp32_adapters

        return cls(
            micro_batch=workload.micro_batch,
            seq_len=workload.seq_len,
            precision="bf16" if engine16 and workload.precision == "mixed" else workload.precision,
            attention=workload.attention,
            gradient_checkpointing=workload.gradient_checkpointing,
            lora_rank=workload.lora_rank if lora else None,
            lora_targets=tuple(t for t in workload.lora_targets if t in kinds) if lora and not everything else (),
            lora_dropout=workload.lora_dropout if lora else 0.0,
            fp32_adapters=lora and peft_fp32_adapters(workload, strategy),
        )


# -- time and limits ------------------------------------------------------------------------------------------


def estimated_seconds(num_layers: int, experts: int = 1) -> float:
    """Trace time: fake tensors cost per operator, not per byte, so it grows with depth (and expert loops)."""
    per_layer = SECONDS_PER_LAYER_STEP * (1 + 0.5 * (experts > 1))
    return SECONDS_FIXED + 2 * per_layer * num_layers


def check_trace_input(spec: ModelSpec, settings: TraceSettings, layers: int | None, time_limit: float) -> int:
    """The layer count to trace, or a UsageError: absurd sizes and traces over the time limit are refused."""
    if settings.micro_batch * settings.seq_len > MAX_TRACE_TOKENS:
        raise UsageError(
            f"--trace of {settings.micro_batch}×{settings.seq_len} tokens per step is beyond any GPU",
            hint=f"trace at most {MAX_TRACE_TOKENS:,} tokens per micro-batch",
        )
    if layers is not None:
        if not 2 <= layers <= spec.num_layers:
            raise UsageError(
                f"--layers {layers} must be between 2 and the model's {spec.num_layers} layers",
                hint="pass e.g. --layers 4: traced with 1 and 4 layers and scaled linearly",
            )
        return layers
    seconds = estimated_seconds(spec.num_layers, spec.num_experts)
    if seconds > time_limit:
        suggested = max(2, int((time_limit - SECONDS_FIXED) / (4 * SECONDS_PER_LAYER_STEP)))
        raise UsageError(
            f"tracing all {spec.num_layers} layers would take about {seconds:.0f} s (limit {time_limit:.0f} s)",
            hint=f"pass --layers {min(suggested, spec.num_layers)} to trace that many and scale linearly",
        )
    return spec.num_layers


def _phase_tracker(param_storages: Any) -> Any:
    """A MemTracker that keeps the peak of each phase and files autocast's parameter copies apart."""
    from accelwiz.estimate.trace_tracker import PhaseTracker  # imports torch

    return PhaseTracker(param_storages)


# -- the trace ------------------------------------------------------------------------------------------------


def _trace_once(
    config: Any, settings: TraceSettings
) -> tuple[Snapshot, dict[str, Snapshot], int, int, dict[str, int], tuple[tuple[str, int, int], ...]]:
    import torch

    from accelwiz.estimate.trace_dropout import cuda_dropout_on_cpu
    from accelwiz.estimate.trace_mask import unpacked_positions
    from accelwiz.estimate.trace_replay import replayed

    model, fake_mode, param_storages = _fake_model(config, settings)
    trainable = [p for p in model.parameters() if p.requires_grad]
    vocab = int(config.get_text_config().vocab_size)
    with fake_mode:
        tokens = torch.randint(0, vocab, (settings.micro_batch, settings.seq_len))
        optimizer = torch.optim.AdamW(trainable, lr=1e-5, foreach=True)  # module docstring, 3
    tracker = _phase_tracker(param_storages)
    with fake_mode, cuda_autocast_on_cpu(), cuda_dropout_on_cpu(), unpacked_positions(), tracker:
        for _ in range(2):  # the second step has optimizer states
            forward_end, gradients = _step(model, tokens, optimizer, tracker, settings)
    phases = {phase: Snapshot(tracker.peaks[phase][1]) for phase in PHASES}
    return Snapshot(forward_end), phases, gradients, _state_bytes(optimizer), *replayed(tracker.events)


def _fake_model(config: Any, settings: TraceSettings) -> tuple[Any, Any, Any]:
    """The model on fake cpu tensors, its FakeTensorMode, and its parameters' storages (whose autocast copies the
    tracker files apart)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.common_utils import get_untyped_storages
    from torch.utils.weak import WeakIdKeyDictionary

    model = build_model(config, settings)
    fake_mode = FakeTensorMode()
    materialise(model, fake_mode, settings)
    param_storages = WeakIdKeyDictionary()
    for param in model.parameters():
        for storage in get_untyped_storages(param):
            param_storages[storage] = True
    return model, fake_mode, param_storages


def _step(model: Any, tokens: Any, optimizer: Any, tracker: Any, settings: TraceSettings) -> tuple[dict[str, int], int]:
    """One training step with its phases marked: (what is live when the loss is returned, the gradients' bytes
    when the optimizer step begins)."""
    import torch

    tracker.peaks.clear()
    tracker.phase = "forward"
    autocast_dtype = torch.bfloat16 if settings.autocast_dtype == "bf16" else torch.float16
    autocast = (torch.autocast("cpu", dtype=autocast_dtype) if settings.precision == "mixed"
                else contextlib.nullcontext())
    with autocast:
        loss = model(input_ids=tokens, labels=tokens).loss
    forward_end = tracker.snapshot()
    tracker.phase = "backward"
    loss.backward()
    del loss
    gradients = tracker.snapshot().get("gradients", 0)
    tracker.phase = "optimizer"
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    tracker.reset_mod_stats()
    return forward_end, gradients


def _state_bytes(optimizer: Any) -> int:
    """Adam's m and v after the step (the step counters excluded)."""
    import torch

    return sum(
        value.untyped_storage().nbytes()
        for state in optimizer.state.values()
        for key, value in state.items()
        if key != "step" and isinstance(value, torch.Tensor)
    )


def trace_training_step(config: Any, settings: TraceSettings, *, layers: int | None = None) -> TraceResult:
    """Trace two training steps of `config` (a transformers config) with `settings`; see the module docstring."""
    started = time.perf_counter()
    depth = getattr(config, layer_count_key(config))
    traced = depth if layers is None else min(layers, depth)
    full = _trace_once(prepare_config(config, settings, traced), settings)
    notes = []
    if traced != depth:
        from accelwiz.estimate.trace_replay import scaled_replay

        one = _trace_once(prepare_config(config, settings, 1), settings)
        forward_end = full[0].scaled(one[0], traced, depth)
        phases = {p: full[1][p].scaled(one[1][p], traced, depth) for p in PHASES}
        per = (traced - 1)
        gradients = round(full[2] + (full[2] - one[2]) / per * (depth - traced))
        states = round(full[3] + (full[3] - one[3]) / per * (depth - traced))
        replayed = scaled_replay(full[4], full[1], phases)
        notes.append(f"traced 1 and {traced} of {depth} layers; every figure scaled linearly to {depth}")
        full = (forward_end, phases, gradients, states, replayed, full[5])
        notes.append(f"the memory timeline (--plot) is of the {traced}-layer trace, not scaled")
    if settings.attention == "flash":
        notes.append("flash-attention traced as sdpa (the same saved output and log-sum-exp)")
    return TraceResult(
        model_type=str(config.model_type),
        settings=settings,
        layers=depth,
        layers_traced=traced,
        forward_end=full[0],
        phase_peaks=full[1],
        gradients=full[2],
        optimizer_states=full[3],
        allocator=full[4],
        timeline=full[5],
        seconds=time.perf_counter() - started,
        notes=tuple(notes),
    )


def trace_workload(workload: Workload, *, strategy: Strategy | None = None, layers: int | None = None,
                   time_limit: float = DEFAULT_TIME_LIMIT) -> TraceResult:
    """`accelwiz estimate --trace`: the workload's model and settings (as `strategy` runs them), traced."""
    settings = TraceSettings.from_workload(workload, strategy)
    count = check_trace_input(workload.model, settings, layers, time_limit)
    config = hf_config_for(workload.model)
    return trace_training_step(config, settings, layers=None if count == workload.model.num_layers else count)


__all__ = [
    "TraceResult",
    "TraceSettings",
    "check_trace_input",
    "estimated_seconds",
    "trace_training_step",
    "trace_workload",
]
