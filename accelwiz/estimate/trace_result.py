"""What a trace measured: bytes by category at one moment (`Snapshot`), and of one traced training step
(`TraceResult`, trace.py's answer), with the linear extrapolation from a shallower trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from accelwiz.estimate.trace import TraceSettings

Phase = Literal["forward", "backward", "optimizer"]
PHASES: tuple[Phase, ...] = ("forward", "backward", "optimizer")
CATEGORIES = ("parameters", "buffers", "autocast_copies", "gradients", "activations", "temporaries", "optimizer")


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
