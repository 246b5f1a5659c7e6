"""One row of the GPU table: what a preset needs to describe a GPU it cannot probe, and what the rules ask of it.

Memory is what the vendor's management library (NVML / `nvidia-smi`, AMD SMI) reports as total memory, in MiB:
slightly less than the marketing size for most data-center boards (an "80 GB" H100 reports 81559 MiB). Where that
number was not read from a real board, the row says `memory_nominal=True` and carries the data sheet's size
(GB x 1024 MiB for GDDR boards, which NVML reports whole). It is shown, never judged: verdicts judge
`cuda_total_mib`, the part CUDA lets torch allocate (a few hundred MiB less; cuda_totals.py).

Precision support:
- NVIDIA by compute capability (https://developer.nvidia.com/cuda-gpus): bf16 and TF32 tensor cores from Ampere
  (8.0), fp8 from Ada/Hopper (8.9); Volta/Turing (7.x) have fp16 tensor cores only, Pascal and older none.
- AMD by gfx target (ROCm's precision-support table, https://rocm.docs.amd.com/en/latest/reference/precision-support.html):
  bf16 matrix cores from CDNA 1 (gfx908, MI100); fp8 from CDNA 3 (gfx942, MI300: the FNUZ variants torch calls
  float8_e4m3fnuz) and CDNA 4 (gfx950, MI350: the OCP formats).
`tflops` is the data sheet's peak DENSE (no sparsity) throughput by precision: "fp32" (vector), "tf32", "fp16",
"bf16" and "fp8" (tensor / matrix cores; fp16 accumulating in fp32 where GeForce boards halve that rate).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

MIB = 1024**2
Vendor = Literal["nvidia", "amd"]

# gfx target -> (native bf16, native fp8), from ROCm's precision-support table
AMD_PRECISION: dict[str, tuple[bool, bool]] = {
    "gfx908": (True, False), "gfx90a": (True, False), "gfx942": (True, True), "gfx950": (True, True),
}
# What torch.cuda.get_device_capability() answers on ROCm: the gfx target's major and minor digits
AMD_CAPABILITY: dict[str, tuple[int, int]] = {
    "gfx908": (9, 0), "gfx90a": (9, 0), "gfx942": (9, 4), "gfx950": (9, 5),
}


@dataclass(frozen=True)
class GpuModel:
    key: str  # short name used by presets and --system: "H100-80GB"
    name: str  # what NVML / AMD SMI reports as the device name
    memory_mib: int
    compute_capability: tuple[int, int]  # NVIDIA's; on AMD what torch reports for the gfx target
    nvlink_links: int  # NVLink links of the SXM form factor (AMD: Infinity Fabric links); 0 for PCIe boards
    pattern: str  # regular expression matched against device names, case-insensitive
    source: str = ""  # the data sheet (URL) the numbers come from
    tflops: Mapping[str, float] = field(default_factory=dict)
    interconnect: str = "PCIe"
    vendor: Vendor = "nvidia"
    arch: str = ""  # NVIDIA architecture name, or AMD gfx target
    memory_nominal: bool = False
    note: str = ""

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def cuda_total_mib(self) -> int:
        """What cudaMemGetInfo reports as total (the most torch can allocate): a published reading of the board, else
        `memory_mib` less its family's driver reserve (cuda_readings.py, docs/gpu-cuda-totals.md)."""
        from accelwiz.probe.cuda_readings import table_cuda_total_mib

        return table_cuda_total_mib(self)

    @property
    def cuda_total_bytes(self) -> int:
        return self.cuda_total_mib * MIB

    @property
    def nvlink(self) -> bool:
        return self.nvlink_links > 0

    @property
    def bf16(self) -> bool:
        if self.vendor == "amd":
            return AMD_PRECISION.get(self.arch, (False, False))[0]
        return self.compute_capability >= (8, 0)

    @property
    def fp8(self) -> bool:
        if self.vendor == "amd":
            return AMD_PRECISION.get(self.arch, (False, False))[1]
        return self.compute_capability >= (8, 9)

    @property
    def peak_16bit_tflops(self) -> float | None:
        """Peak dense 16-bit tensor TFLOP/s (bf16, or fp16 on boards without bf16), for MFU; None when unlisted."""
        return self.tflops.get("bf16") or self.tflops.get("fp16")


def tf(fp32: float | None = None, tf32: float | None = None, fp16: float | None = None,
       bf16: float | None = None, fp8: float | None = None) -> dict[str, float]:
    """A row's dense TFLOP/s, leaving out what the data sheet does not list (or the hardware lacks)."""
    given = {"fp32": fp32, "tf32": tf32, "fp16": fp16, "bf16": bf16, "fp8": fp8}
    return {name: value for name, value in given.items() if value is not None}
