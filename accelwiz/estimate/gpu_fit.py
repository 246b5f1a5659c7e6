"""How one process's estimate meets a GPU of a given size: the one owner of what every GPU verdict judges and of
what the process then holds there (the verdict, the recommendation, `init`'s menus and TRL's combined need all
read it).

Three mechanisms decide it, each the library's own decision, not a margin:

* the caching allocator's retry (`MemoryEstimate.retries_on`): where the allocated peak and the runtime fit but
  the whole reserve does not, a cudaMalloc that fails releases the cache and retries: the GPU is judged on the
  tensors and the runtime, and the process holds the whole GPU;
* bitsandbytes' paged optimizer states (`pages_out_on`): CUDA managed memory gives way to the rest, paged in
  for each step: judged without them, held up to the GPU's memory;
* DeepSpeed's ZeRO-1/2 flat copy at loading (zero_flatten.py): made on the CPU where the GPU cannot hold it
  beside the loaded model (from 0.18.7; always before), so that run's figures are the ones judged; an estimate
  made for this GPU already counts it where DeepSpeed makes it, one made for another is judged again here
  (`flattens_on_cpu`), by the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate


@dataclass(frozen=True)
class GpuFit:
    need: int  # what the GPU is judged on
    held: int  # what the process will hold there at its peak (the GPU's memory where a cache gives way)
    retries: bool = False  # the allocator would fill the GPU and release its cache to retry
    reserve: int | None = None  # with `retries`: the reserved peak + runtime that would not fit
    paged_out: int = 0  # bitsandbytes' paged states the GPU cannot hold beside the rest
    cpu_flatten: bool = False  # ZeRO-1/2's flat copy made on the CPU: this GPU cannot hold it beside the model


def gpu_fit(estimate: MemoryEstimate, gpu_bytes: int | None) -> GpuFit:
    """How `estimate` meets a GPU of `gpu_bytes` (unknown: None: the whole footprint, nothing gives way)."""
    if estimate.flattens_on_cpu(gpu_bytes):
        return gpu_fit(estimate.with_cpu_flatten(), gpu_bytes)
    fit = _fit(estimate, gpu_bytes)
    flatten = estimate.flatten
    return replace(fit, cpu_flatten=True) if flatten is not None and flatten.lacks_room(gpu_bytes) else fit


def _fit(estimate: MemoryEstimate, gpu_bytes: int | None) -> GpuFit:
    """`gpu_fit` once loading's flat copy is where DeepSpeed makes it on this GPU."""
    total, unpaged = int(estimate.per_gpu_total), int(estimate.unpaged_total)
    if not gpu_bytes:
        return GpuFit(total, total)
    paged_out = int(estimate.paged_states) if estimate.pages_out_on(gpu_bytes) else 0
    if estimate.retries_on(gpu_bytes):
        return GpuFit(int(estimate.allocated + estimate.runtime), int(gpu_bytes), True, unpaged, paged_out)
    if paged_out:  # the paged states give way to the rest, up to the GPU's memory where the rest fits
        return GpuFit(unpaged, int(gpu_bytes) if unpaged <= gpu_bytes else total, paged_out=paged_out)
    return GpuFit(total, total)
