"""A table of GPU models: what a preset needs to describe a GPU it cannot probe.

Memory is what NVML (and so `nvidia-smi`) reports as total memory, in MiB, on a current driver: slightly less
than the marketing size for most boards (an "80 GB" H100 reports 81559 MiB). Compute capabilities are NVIDIA's
(https://developer.nvidia.com/cuda-gpus). `nvlink_links` is the number of NVLink links of the SXM form
factor (V100 6, A100 12, H100/H200/B200 18); PCIe boards get 0, as their optional bridge is not assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIB = 1024**2


@dataclass(frozen=True)
class GpuModel:
    key: str  # short name used by presets: "H100-80GB"
    name: str  # what NVML reports as the device name
    memory_mib: int
    compute_capability: tuple[int, int]
    nvlink_links: int
    pattern: str  # regular expression matched against NVML names, case-insensitive

    @property
    def peak_16bit_tflops(self) -> float | None:
        """Peak dense 16-bit tensor-core TFLOP/s (for MFU), or None when not listed."""
        return DENSE_16BIT_TFLOPS.get(self.key)

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def nvlink(self) -> bool:
        return self.nvlink_links > 0

    @property
    def fp8(self) -> bool:
        return self.compute_capability >= (8, 9)


GPU_MODELS: tuple[GpuModel, ...] = (
    GpuModel("T4", "Tesla T4", 15360, (7, 5), 0, r"\bT4\b"),
    GpuModel("V100-16GB", "Tesla V100-SXM2-16GB", 16160, (7, 0), 6, r"V100-SXM2-16GB"),
    GpuModel("V100-PCIE-16GB", "Tesla V100-PCIE-16GB", 16160, (7, 0), 0, r"V100-PCIE-16GB"),
    GpuModel("V100-32GB", "Tesla V100-SXM2-32GB", 32510, (7, 0), 6, r"V100-SXM2-32GB"),
    GpuModel("A10G", "NVIDIA A10G", 23028, (8, 6), 0, r"\bA10G\b"),
    GpuModel("A10", "NVIDIA A10", 23028, (8, 6), 0, r"\bA10\b(?!G)"),
    GpuModel("L4", "NVIDIA L4", 23034, (8, 9), 0, r"\bL4\b"),
    GpuModel("L40S", "NVIDIA L40S", 46068, (8, 9), 0, r"\bL40S\b"),
    GpuModel("RTX3090", "NVIDIA GeForce RTX 3090", 24576, (8, 6), 0, r"RTX 3090"),
    GpuModel("RTX4090", "NVIDIA GeForce RTX 4090", 24564, (8, 9), 0, r"RTX 4090"),
    GpuModel("RTX-A6000", "NVIDIA RTX A6000", 49140, (8, 6), 0, r"RTX A6000"),
    GpuModel("A100-40GB", "NVIDIA A100-SXM4-40GB", 40960, (8, 0), 12, r"A100-SXM4-40GB"),
    GpuModel("A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB", 40960, (8, 0), 0, r"A100-PCIE-40GB"),
    GpuModel("A100-80GB", "NVIDIA A100-SXM4-80GB", 81920, (8, 0), 12, r"A100-SXM4-80GB"),
    GpuModel("A100-PCIE-80GB", "NVIDIA A100 80GB PCIe", 81920, (8, 0), 0, r"A100 80GB PCIe"),
    GpuModel("H100-80GB", "NVIDIA H100 80GB HBM3", 81559, (9, 0), 18, r"H100 80GB HBM3"),
    GpuModel("H100-PCIE", "NVIDIA H100 PCIe", 81559, (9, 0), 0, r"H100 PCIe"),
    GpuModel("H200", "NVIDIA H200", 143771, (9, 0), 18, r"\bH200\b"),
    GpuModel("B200", "NVIDIA B200", 183359, (10, 0), 18, r"\bB200\b"),
)
# Peak dense (no sparsity) 16-bit tensor-core TFLOP/s from NVIDIA's datasheets: bf16, or fp16 with fp32
# accumulation on boards without bf16 (T4, V100). The denominator of the built-in trainer's MFU.
DENSE_16BIT_TFLOPS: dict[str, float] = {
    "T4": 65.0, "V100-16GB": 125.0, "V100-PCIE-16GB": 112.0, "V100-32GB": 125.0, "A10": 125.0, "L4": 121.0,
    "L40S": 362.0, "RTX3090": 71.0, "RTX4090": 165.2, "RTX-A6000": 154.8, "A100-40GB": 312.0,
    "A100-PCIE-40GB": 312.0, "A100-80GB": 312.0, "A100-PCIE-80GB": 312.0, "H100-80GB": 989.4, "H100-PCIE": 756.0,
    "H200": 989.4, "B200": 2250.0,
}

_BY_KEY = {model.key.lower(): model for model in GPU_MODELS}


def gpu_model(key: str) -> GpuModel:
    """The table entry for a short key such as "H100-80GB" (case-insensitive); KeyError when unknown."""
    return _BY_KEY[key.lower()]


def match_gpu_name(name: str) -> GpuModel | None:
    """The table entry whose pattern matches an NVML device name, or None for a model we do not list."""
    return next((m for m in GPU_MODELS if re.search(m.pattern, name, re.IGNORECASE)), None)
