"""The one verdict on a memory estimate: fits, tight, or does not fit.

`estimate`, `estimate --compare`, the recommendation (and so `init`), `check` (AW5xx) and `run` all judge with
`memory_verdict`, so the same inputs get the same answer everywhere. GPU memory and host RAM are judged
separately, each against its own capacity with the same headroom, and every message names which one it is:

- fits: the need is within `headroom` of the capacity (90%: the rest absorbs what no formula sees, such as
  fragmentation spikes, kernels' workspaces and the dataloader's pinned memory);
- tight: above that, but within the capacity: it may run, or fail at the longest batch;
- does not fit: above the capacity.

So `fits` (what `estimate` exits 0 on and `--format json` prints) holds exactly when the need is within the
capacity, and "tight" is only ever said of a need below it. On a GPU the need is the reserved peak plus the
runtime (`MemoryEstimate.per_gpu_total`), except where the caching allocator would retry
(`MemoryEstimate.retries_on`: the tensors and the runtime fit, the cache beyond them does not): there the need is
the allocated peak plus the runtime, the verdict at least "tight", and the message names the reserve that would
not fit, so no line reads "tight: 79.6 of 79.6 GiB (100%)" or "84.2 GiB per GPU, tight" on an 80 GiB GPU.

bitsandbytes' paged optimizer states (`MemoryEstimate.paged_states`, estimate/paged_states.py) live in CUDA managed
memory: where they fit beside the rest the GPU is judged with them; where they do not (`pages_out_on`) the driver
keeps them in host RAM and pages them in for each step, so the GPU is judged without them, host RAM with them (up
to all of them, on every GPU of the machine), and the message says the step slows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.estimate.gpu_fit import gpu_fit
from accelwiz.estimate.sizes import gib
from accelwiz.vocab import HEADROOM, Verdict

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate

RETRIES = ("the caching allocator would reach the GPU's limit, release its cache and retry: slower, and close "
           "to out of memory")
PAGED_OUT = ("they do not fit beside the rest, so CUDA's driver keeps them in host RAM and pages them in for every "
             "optimizer step (slower)")
_ORDER: dict[str, int] = {"fits": 0, "tight": 1, "does not fit": 2}


def judge(need: float, capacity: float, headroom: float = HEADROOM, *, retries: bool = False) -> Verdict:
    """One resource: 'does not fit' above the capacity, 'tight' above `headroom` of it (or where the allocator
    would retry), else 'fits'."""
    if need > capacity:
        return "does not fit"
    if retries or need > headroom * capacity:
        return "tight"
    return "fits"


def worst(*verdicts: Verdict | None) -> Verdict | None:
    known = [v for v in verdicts if v is not None]
    return max(known, key=_ORDER.__getitem__) if known else None


@dataclass(frozen=True)
class ResourceVerdict:
    """The verdict on one resource: GPU memory per GPU, or host RAM per machine."""

    resource: Literal["GPU memory", "host RAM"]
    need: int
    capacity: int
    headroom: float = HEADROOM
    retries: bool = False  # the allocator would fill the GPU and release its cache (MemoryEstimate.retries_on)
    reserved: int | None = None  # with `retries`: the reserved peak + runtime that would not fit
    paged_out: int = 0  # bitsandbytes' paged optimizer states the GPU cannot hold, per GPU (module docstring)
    cpu_flatten: bool = False  # ZeRO-1/2's flat copy made on the CPU: the GPU cannot hold it beside the model

    @property
    def retry_note(self) -> str:
        """' (allocated + runtime; with its cache 81.4 GiB: the caching allocator would ...)', the paged states'
        note, or ''."""
        note = f" (allocated + runtime; with its cache {gib(self.reserved or 0)}: {RETRIES})" if self.retries else ""
        if self.paged_out and self.resource == "GPU memory":
            note += f" (without {gib(self.paged_out)} of bitsandbytes' paged optimizer states: {PAGED_OUT})"
        elif self.paged_out:
            note += f" (with up to {gib(self.paged_out)} of paged optimizer states the GPUs cannot hold)"
        if self.cpu_flatten:
            note += (" (DeepSpeed flattens ZeRO's 16-bit parameter buffer on the CPU: the GPU cannot hold it beside "
                     "the loaded model; loading is slower)")
        return note

    @property
    def verdict(self) -> Verdict:
        return judge(self.need, self.capacity, self.headroom, retries=self.retries)

    @property
    def fits(self) -> bool:
        """Within the capacity: 'fits' or 'tight'."""
        return self.verdict != "does not fit"

    def cell(self) -> str:
        """A menu's words: '30.8 GiB per GPU, fits', '73.3 GiB per GPU (allocator retries), tight'."""
        per = "per GPU" if self.resource == "GPU memory" else "per machine"
        retry = " (allocator retries)" if self.retries else ""
        retry += " (optimizer states paged to host RAM)" if self.paged_out and self.resource == "GPU memory" else ""
        return f"{gib(self.need)} {per}{retry}, {self.verdict}"

    @property
    def share(self) -> str:
        per = "per GPU" if self.resource == "GPU memory" else "per machine"
        percent = f" ({self.need / self.capacity:.0%})" if self.capacity else ""
        return f"{gib(self.need)} of {gib(self.capacity)} {per}{percent}"

    def describe(self) -> str:
        """'GPU memory: tight, 73.6 GiB of 79.6 GiB per GPU (92%)'."""
        return f"{self.resource}: {self.verdict}, {self.share}{self.retry_note}"


@dataclass(frozen=True)
class MemoryVerdict:
    """GPU memory and host RAM, each judged on its own (None where the capacity is unknown)."""

    gpu: ResourceVerdict | None
    host: ResourceVerdict | None

    @property
    def verdict(self) -> Verdict | None:
        """The worse of the two; None when there is nothing to judge against."""
        return worst(*(r.verdict for r in (self.gpu, self.host) if r is not None))

    @property
    def fits(self) -> bool:
        """Fits with the headroom left on both: what a recommendation may pick."""
        return self.verdict in ("fits", None)

    @property
    def runs(self) -> bool:
        """Not over either capacity ('fits' or 'tight'): what `estimate` exits 0 on."""
        return self.verdict != "does not fit"

    def short(self) -> str:
        """A table cell: 'yes', 'tight', 'no', 'no (host RAM)' or '?'."""
        verdict = self.verdict
        if verdict is None:
            return "?"
        word = {"fits": "yes", "tight": "tight", "does not fit": "no"}[verdict]
        failing = [r for r in (self.gpu, self.host) if r is not None and r.verdict == verdict]
        if verdict != "fits" and len(failing) == 1 and failing[0].resource == "host RAM":
            word += " (host RAM)"
        return word

    def describe(self, gpu_name: str | None = None) -> str:
        """The verdict first, then each resource, the one that decides it first:
        'tight: GPU memory 73.6 GiB of 79.6 GiB per GPU (92%) on H100; host RAM fits, 20.0 GiB of ...'."""
        overall = self.verdict
        if overall is None:
            return "no verdict: no GPU memory or host RAM to judge against"
        known = sorted((r for r in (self.gpu, self.host) if r is not None), key=lambda r: -_ORDER[r.verdict])
        parts = []
        for resource in known:
            where = f" on {gpu_name}" if gpu_name and resource.resource == "GPU memory" else ""
            word = "" if resource.verdict == overall else f" {resource.verdict},"
            parts.append(f"{resource.resource}{word} {resource.share}{where}{resource.retry_note}")
        text = f"{overall}: " + "; ".join(parts)
        if overall == "tight":
            text += f"; less than {1 - known[0].headroom:.0%} left for fragmentation spikes"
        return text


def memory_verdict(
    estimate: MemoryEstimate,
    gpu_bytes: int | None,
    host_bytes: int | None = None,
    headroom: float = HEADROOM,
) -> MemoryVerdict:
    """Judge an estimate against one GPU's memory and one machine's RAM (either may be unknown: None)."""
    gpu = gpu_verdict(estimate, gpu_bytes, headroom) if gpu_bytes else None
    # paged states the GPUs cannot hold are in host RAM, up to all of them on each GPU of the machine
    spilled = estimate.paged_states * estimate.strategy.gpus_per_node if gpu and gpu.paged_out else 0
    host = ResourceVerdict("host RAM", int(estimate.host_bytes + spilled), host_bytes, headroom,
                           paged_out=spilled) if host_bytes else None
    return MemoryVerdict(gpu, host)


def gpu_verdict(estimate: MemoryEstimate, gpu_bytes: int, headroom: float = HEADROOM) -> ResourceVerdict:
    """The verdict on one GPU's memory: what every command's GPU verdict is, on what `gpu_fit` says the GPU is
    judged on (retries, paged states and DeepSpeed's CPU flatten each from the run that would happen there)."""
    fit = gpu_fit(estimate, gpu_bytes)
    return ResourceVerdict("GPU memory", fit.need, gpu_bytes, headroom, fit.retries, fit.reserve, fit.paged_out,
                           fit.cpu_flatten)
