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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from accelwiz.errors import UsageError
from accelwiz.estimate.trace_autocast import cuda_autocast_on_cpu
from accelwiz.estimate.trace_model import build_model, hf_config_for, layer_count_key, materialise, prepare_config

if TYPE_CHECKING:

    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

Phase = Literal["forward", "backward", "optimizer"]
PHASES: tuple[Phase, ...] = ("forward", "backward", "optimizer")
CATEGORIES = ("parameters", "buffers", "autocast_copies", "gradients", "activations", "temporaries", "optimizer")
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


@dataclass(frozen=True)
class Snapshot:
    """Bytes by category at one moment."""

    bytes: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.bytes.values())

    def scaled(self, one: Snapshot, layers_traced: int, layers: int) -> Snapshot:
        """Linear extrapolation from this (traced with `layers_traced` layers) and `one` (1 layer)."""
        result = {}
        for key in CATEGORIES:
            per_layer = (self.bytes.get(key, 0) - one.bytes.get(key, 0)) / (layers_traced - 1)
            result[key] = max(0, round(self.bytes.get(key, 0) + per_layer * (layers - layers_traced)))
        return Snapshot(result)


@dataclass(frozen=True)
class TraceResult:
    """Bytes of one traced training step (the second), unsharded, without CUDA context or allocator slack."""

    model_type: str
    settings: TraceSettings
    layers: int  # of the model
    layers_traced: int  # equal to `layers` unless scaled
    forward_end: Snapshot  # what is live when the loss is returned
    phase_peaks: dict[str, Snapshot]  # the largest moment of each phase
    gradients: int  # all parameter gradients, when the optimizer step begins
    optimizer_states: int  # Adam m and v after the step (the step counters excluded)
    seconds: float
    # the caching-allocator replay of the recorded allocations and frees (allocator.py): `reserved` and
    # `allocated` peaks, and `reserved_<phase>` / `allocated_<phase>` per phase
    allocator: dict[str, int] = field(default_factory=dict)
    # (phase, allocated, reserved) over the second step, from the replay (at most 1500 points)
    timeline: tuple[tuple[str, int, int], ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def scaled(self) -> bool:
        return self.layers_traced != self.layers

    @property
    def peak_phase(self) -> str:
        return max(PHASES, key=lambda p: self.phase_peaks[p].total)

    @property
    def peak(self) -> int:
        return self.phase_peaks[self.peak_phase].total

    @property
    def reserved(self) -> int:
        """What `torch.cuda.max_memory_reserved` should show: the allocator replay's reserved peak."""
        return self.allocator.get("reserved", 0)

    @property
    def weights(self) -> int:
        """Parameters plus autocast's 16-bit copies, as the analytic model counts weights."""
        return self.forward_end.bytes["parameters"] + self.forward_end.bytes["autocast_copies"]

    @property
    def activations(self) -> int:
        """Everything forward keeps for backward, logits and loss included (autocast weight copies not)."""
        return self.forward_end.bytes["activations"]

    @property
    def optimizer_temporaries(self) -> int:
        peak = self.phase_peaks["optimizer"].bytes
        return max(0, peak["optimizer"] - self.optimizer_states)

    def as_dict(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "layers": self.layers,
            "layers_traced": self.layers_traced,
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer_states": self.optimizer_states,
            "activations": self.activations,
            "optimizer_temporaries": self.optimizer_temporaries,
            "peak": self.peak,
            "peak_phase": self.peak_phase,
            "reserved": self.reserved,
            "allocator": dict(self.allocator),
            "phase_peaks": {p: {"total": s.total, **s.bytes} for p, s in self.phase_peaks.items()},
            "forward_end": {"total": self.forward_end.total, **self.forward_end.bytes},
            "seconds": round(self.seconds, 2),
            "notes": list(self.notes),
        }


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
    import torch
    from torch.distributed._tools.common_utils import get_untyped_storages
    from torch.distributed._tools.mem_tracker import _TOTAL_KEY, MemTracker, _MemRefType, _UpdateType

    names = {
        _MemRefType.PARAM: "parameters",
        _MemRefType.BUFFER: "buffers",
        _MemRefType.OTH: "autocast_copies",
        _MemRefType.GRAD: "gradients",
        _MemRefType.ACT: "activations",
        _MemRefType.TEMP: "temporaries",
        _MemRefType.OPT: "optimizer",
    }

    class PhaseTracker(MemTracker):
        def __init__(self) -> None:
            super().__init__()
            self._phase: str = "setup"
            self.peaks: dict[str, tuple[int, dict[str, int]]] = {}
            # every allocation and free, in order, for the caching-allocator replay (allocator.py)
            self.events: list[tuple] = []

        @property
        def phase(self) -> str:
            return self._phase

        @phase.setter
        def phase(self, name: str) -> None:
            self._phase = name
            self.events.append(("phase", name))

        def _update_snap(self, u_type: Any, winfo: Any, old_mem_consumed: Any = None, old_reftype: Any = None) -> None:
            super()._update_snap(u_type, winfo, old_mem_consumed, old_reftype)
            if u_type == _UpdateType.ADD:
                self.events.append(("alloc", id(winfo), winfo.mem_consumed))
            elif u_type == _UpdateType.DEL:
                self.events.append(("free", id(winfo)))
            elif u_type == _UpdateType.SIZE:  # a storage resized in place: freed and allocated again
                self.events += [("free", id(winfo)), ("alloc", id(winfo), winfo.mem_consumed)]

        def snapshot(self) -> dict[str, int]:
            snap = self._curr_mem_snap.get(torch.device("cpu"), {})
            return {names[k]: v for k, v in snap.items() if k != _TOTAL_KEY}

        def _track_module_params_and_buffers(self, module: Any, install_grad_hooks: bool = True) -> Any:
            # MemTracker hooks every parameter, and a frozen one (LoRA's base) refuses a hook: hook trainables only
            memory = super()._track_module_params_and_buffers(module, install_grad_hooks=False)
            for param in module.parameters():
                if install_grad_hooks and param.requires_grad and param not in self._param_to_grad_hook_handles:
                    def grad_hook(grad: Any) -> None:
                        self._update_and_maybe_create_winfos(grad, _MemRefType.GRAD)

                    self._param_to_grad_hook_handles[param] = (
                        param.register_hook(grad_hook),
                        param.register_post_accumulate_grad_hook(lambda p: grad_hook(p.grad)),
                    )
            return memory

        def _update_peak_stats(self, peak_state: Any) -> None:  # per operator: only the phase maxima
            snap = self._curr_mem_snap.get(torch.device("cpu"))
            if snap is None:
                return
            best = self.peaks.get(self.phase)
            if best is None or snap[_TOTAL_KEY] > best[0]:
                self.peaks[self.phase] = (snap[_TOTAL_KEY], self.snapshot())

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            result = super().__torch_dispatch__(func, types, args, kwargs)
            is_copy = func is torch.ops.aten._to_copy.default and isinstance(args[0], torch.Tensor)
            if is_copy and any(st in param_storages for st in get_untyped_storages(args[0])):
                self._update_and_maybe_create_winfos(result, _MemRefType.OTH)
            return result

    return PhaseTracker()


# -- the trace ------------------------------------------------------------------------------------------------


def _trace_once(
    config: Any, settings: TraceSettings
) -> tuple[Snapshot, dict[str, Snapshot], int, int, dict[str, int], tuple[tuple[str, int, int], ...]]:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.common_utils import get_untyped_storages
    from torch.utils.weak import WeakIdKeyDictionary

    from accelwiz.estimate.trace_dropout import cuda_dropout_on_cpu
    from accelwiz.estimate.trace_replay import replayed

    model = build_model(config, settings)
    fake_mode = FakeTensorMode()
    materialise(model, fake_mode, settings)
    trainable = [p for p in model.parameters() if p.requires_grad]
    param_storages = WeakIdKeyDictionary()
    for param in model.parameters():
        for storage in get_untyped_storages(param):
            param_storages[storage] = True
    vocab = int(config.get_text_config().vocab_size)
    with fake_mode:
        tokens = torch.randint(0, vocab, (settings.micro_batch, settings.seq_len))
        optimizer = torch.optim.AdamW(trainable, lr=1e-5, foreach=True)  # module docstring, 3
    autocast_dtype = torch.bfloat16 if settings.autocast_dtype == "bf16" else torch.float16
    tracker = _phase_tracker(param_storages)
    forward_end: dict[str, int] = {}
    gradients = 0
    with fake_mode, cuda_autocast_on_cpu(), cuda_dropout_on_cpu(), tracker:
        for _ in range(2):  # the second step has optimizer states
            tracker.peaks.clear()
            tracker.phase = "forward"
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
    states = sum(
        value.untyped_storage().nbytes()
        for state in optimizer.state.values()
        for key, value in state.items()
        if key != "step" and isinstance(value, torch.Tensor)
    )
    phases = {phase: Snapshot(tracker.peaks[phase][1]) for phase in PHASES}
    return Snapshot(forward_end), phases, gradients, states, *replayed(tracker.events)


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
