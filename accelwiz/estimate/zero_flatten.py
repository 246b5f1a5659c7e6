"""Where DeepSpeed's ZeRO-1/2 flattens the 16-bit parameters at loading, by release: the one owner of that decision.

`DeepSpeedZeroOptimizer.__init__` (runtime/zero/stage_1_and_2.py) copies each parameter group into one
contiguous, aligned 16-bit buffer (`bit16_groups_flat`) and points the parameters at views of it. Where that copy
is made decides whether the GPU holds the trainable model twice for a moment (read in each release's sdist):

* before 0.18.7: always on the CPU. 0.8.3 :302, 0.10.3 :317, 0.12.6 :319 `move_to_cpu(self.bit16_groups[i])`
  (utils `tensor.data = tensor.data.cpu()`); 0.14.4 :325 to 0.18.6 :376 `param.cpu_data = param.data.cpu()`,
  `param.data = torch.empty(1)`; then `empty_cache()`, `flatten_dense_tensors_aligned` on the host and
  `.to(current_device_name())`: the GPU only ever holds one copy;
* 0.18.7 on: after `empty_cache()`, on the GPU where the accelerator's free memory holds the flat buffer beside
  the parameters (0.18.7 :380-382 `flatten_on_gpu = available_vram >= flat_buffer_bytes`; 0.19.0 :381-383 and
  0.19.8 :451-453 the same as `flatten_on_accelerator`), else on the CPU as before. `available_memory()` (CUDA
  accelerator) is NVML's free memory where pynvml imports (v2: the total less the driver's reserve, the CUDA
  context, NCCL's buffers and the loaded weights: CUDA's total, the capacity every verdict judges, less those),
  else torch's total less its allocated bytes (the context and NCCL not counted): the NVML reading is taken,
  a fraction of a GiB apart.

The buffer is sized per parameter group (`aligned_numel * element_size`); a trainer's groups are the decayed
weights and a small no-decay rest, so the trainable parameters at the compute width stand for the largest one.
Which release: `--stack deepspeed==X`, else the installed one, else today's (resolution/stack.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.stack import Version

GIB = 2**30
FIRST_FLATTEN_ON_GPU: Version = (0, 18, 7)  # the first release that flattens on the GPU where it fits
TODAY: Version = (0, 19, 8)  # what a stack without DeepSpeed models: the release read last


@dataclass(frozen=True)
class ZeroFlatten:
    """ZeRO-1/2's flat 16-bit copy of one process's trainable parameters and what DeepSpeed weighs it against."""

    flat: float  # bytes of the flat buffer
    resident: float  # bytes allocated on the GPU when DeepSpeed checks: the loaded weights
    beside: float  # what NVML also counts used then: the CUDA context and NCCL's buffers
    version: Version

    @property
    def release(self) -> str:
        return ".".join(map(str, self.version))

    def on_gpu(self, gpu_bytes: int | None) -> bool:
        """Whether DeepSpeed makes the copy on a GPU of `gpu_bytes` (None: unknown, where it fits assumed: the
        larger loading) beside the parameters: never before 0.18.7, else where its free memory holds it."""
        if self.version < FIRST_FLATTEN_ON_GPU:
            return False
        return not gpu_bytes or self.free(gpu_bytes) >= self.flat

    def free(self, gpu_bytes: int) -> float:
        """`available_memory()` at the check on a GPU of `gpu_bytes`."""
        return gpu_bytes - self.beside - self.resident

    def lacks_room(self, gpu_bytes: int | None) -> bool:
        """A release that would flatten on the GPU, on one that cannot hold the copy: the CPU for want of room."""
        return bool(gpu_bytes) and self.version >= FIRST_FLATTEN_ON_GPU and not self.on_gpu(gpu_bytes)

    def gpu_bytes(self, gpu_bytes: int | None) -> float:
        """The copy's bytes beside the parameters at loading on a GPU of `gpu_bytes`: the buffer, or 0 on the CPU
        (the buffer then replaces the parameters it was made from)."""
        return self.flat if self.on_gpu(gpu_bytes) else 0.0

    def why(self, gpu_bytes: int | None) -> str:
        """Where DeepSpeed flattens on a GPU of `gpu_bytes`, and the release's rule that says so."""
        copy = f"the trainable parameters into one {self.flat / GIB:.2f} GiB 16-bit buffer"
        if self.version < FIRST_FLATTEN_ON_GPU:
            return (f"DeepSpeed {self.release} flattens {copy} on the CPU (before 0.18.7 stage_1_and_2.py always "
                    "moves each group to the CPU first), then moves it to the GPU: one copy there")
        if not gpu_bytes:
            return (f"DeepSpeed {self.release} flattens {copy} on the GPU beside them, where the GPU's free memory "
                    "holds it (stage_1_and_2.py flatten_on_accelerator; else on the CPU, one copy)")
        free = f"{max(0.0, self.free(gpu_bytes)) / GIB:.2f} GiB free of {gpu_bytes / GIB:.1f} GiB"
        if self.on_gpu(gpu_bytes):
            return f"DeepSpeed {self.release} flattens {copy} on the GPU beside them ({free}: it fits)"
        return (f"DeepSpeed {self.release} flattens {copy} on the CPU ({free}: flatten_on_accelerator false), then "
                "moves it to the GPU: one copy there")


def zero_flatten(workload: Workload, strategy: Strategy, resident: float, beside: float) -> ZeroFlatten | None:
    """ZeRO-1/2's flat copy for `workload` (None for any other strategy), weighed against `resident` loaded bytes
    and `beside` (CUDA context, NCCL) on the GPU."""
    if strategy.kind not in ("zero1", "zero2"):
        return None
    flat = workload.compute_width * workload.trainable_parameters
    return ZeroFlatten(float(flat), float(resident), float(beside), workload.stack.deepspeed or TODAY)
