"""The GPU table's CUDA totals: each board's smallest published reading, and the rule for boards without one.

What the readings are and where they come from: docs/gpu-cuda-totals.md; how the capacity a verdict judges is
chosen among the live driver's figure, these and the rule: cuda_totals.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.probe.gpu_specs import GpuModel

# Published CUDA totals (MiB, truncated), the smallest reading per board; the sources are docs/gpu-cuda-totals.md's
# table (deviceQuery's "Total amount of global memory", torch's `total_memory=` or an OOM's "total capacity").
# tests/probe/test_cuda_totals.py checks this dict against the doc's "What was built" table.
READINGS: dict[str, int] = {
    "A100-40GB": 40339,  # deviceQuery 42,298,834,944 B (bottlerocket#3873, driver CUDA 12.2)
    "A100-PCIE-40GB": 40326,  # torch total_memory=40326MB (1.9.0+cu111)
    "A100-80GB": 81050,  # deviceQuery 84,987,740,160 B (driver 12.2)
    "A100-PCIE-80GB": 81049,  # "Total global mem: 81049 MB" (ekondis/mixbench#47, driver 12.3)
    "H100-80GB": 81079,  # deviceQuery 85,017,755,648 B (driver 13.0)
    "H100-PCIE": 81008,  # torch total_memory=81008MB (one reading)
    "H200": 143155,  # OOM "139.80 GiB" x5; torch total_memory=143156MB
    "L40S": 45372,  # deviceQuery 47,576,711,168 B (driver 12.4)
    "L40": 45466,  # OOM "44.40 GiB" (QwenLM/Qwen3-VL#2097)
    "A40": 45486,  # OOM "44.42 GiB"
    "A10G": 22508,  # OOM "21.98 GiB" (g5.12xlarge)
    "A10": 22515,  # deviceQuery 23,609,475,072 B (driver 12.2)
    "L4": 22518,  # deviceQuery 23,612,293,120 B (CUDA 11.8 demo_suite)
    "T4": 14917,  # deviceQuery 15,642,329,088 B (driver 12.5; 15110 on R450-460)
    "V100-16GB": 16128,  # deviceQuery 16,911,433,728 B (driver 11.0)
    "V100-32GB": 32502,  # OOM "31.74 GiB" (liucongg/ChatGLM-Finetuning#73)
    "RTX3090": 24115,  # deviceQuery 25,286,672,384 B (desktop with a display); OOM 23.70 GiB headless
    "RTX4090": 24207,  # OOM "23.64 GiB" x2 (deviceQuery 24210, driver 12.4)
    "RTX-A6000": 48681,  # OOM "47.54 GiB" (2xA6000, ECC off: NVML 49140)
    "A30": 24095,  # OOM "23.53 GiB" (google/RB-Modulation#5)
    "MI300X": 196291,  # HIP OOM "191.69 GiB" in a VM (196588 bare metal)
    "MI250X": 65516,  # HIP OOM "63.98 GiB" x5 (a 64 GB CDNA2 device)
}

# Rows whose `memory_mib` is a pre-R510 NVML total, which already left the driver's reserve out and matched the CUDA
# total of that driver (V100-32GB 32510 MiB vs an OOM's "31.75 GiB"); current drivers show 16384/32768 MiB for
# the same V100s. Their CUDA total is that figure less the drift seen since: V100-16GB 16160 -> 16128 MiB (driver 11.0).
PRE_R510_KEYS = frozenset({
    "K80", "M40-24GB", "P100-16GB", "P100-PCIE-16GB", "P100-PCIE-12GB", "P40", "P4", "Quadro-P6000",
    "V100-16GB", "V100-PCIE-16GB", "V100-32GB", "V100-SXM3-32GB", "V100-PCIE-32GB", "V100S-32GB", "TITAN-V",
    "Quadro-GV100", "Quadro-RTX8000", "Quadro-RTX6000", "Quadro-RTX5000",
})
PRE_R510_DRIFT_MIB = 32

# The largest reserve (current NVML total - CUDA total) read on any board of the family, by compute capability;
# docs/gpu-cuda-totals.md, "What the readings say" (1). Families without a reading borrow the nearest measured
# family's, named beside it, so the rule errs toward "does not fit".
FAMILY_RESERVE_MIB: dict[tuple[int, int], int] = {
    (6, 1): 442,  # Pascal GDDR (no reading): Turing's, the nearest GDDR family read
    (7, 0): 266,  # Volta: V100-32GB 32768 (R580) vs OOM 31.74 GiB
    (7, 5): 442,  # Turing: T4 15360 vs 14917.7 (driver 12.5)
    (8, 0): 881,  # Ampere HBM (GA100): A100-80GB 81920 vs OOM 79.14 GiB
    (8, 6): 520,  # Ampere GDDR (GA10x): A10G 23028 vs OOM 21.98 GiB
    (8, 9): 695,  # Ada: L40S 46068 vs 45372.7 (driver 12.4)
    (9, 0): 616,  # Hopper: H200 143771 vs OOM 139.80 GiB
    (12, 0): 695,  # Blackwell RTX, GDDR7 (no reading): Ada's, the nearest GDDR family read
}
OTHER_NVIDIA_RESERVE_MIB = 881  # Blackwell data center and the rest (no reading): the largest read on any NVIDIA board
AMD_RESERVE_MIB = 320  # CDNA: MI300X in a VM 196608 vs HIP OOM 191.69 GiB (bare metal: about 20)


def family_reserve_mib(vendor: str, capability: tuple[int, int]) -> int:
    """The rule's reserve for a GPU without a reading: its family's largest measured reserve."""
    if vendor == "amd":
        return AMD_RESERVE_MIB
    return FAMILY_RESERVE_MIB.get(tuple(capability), OTHER_NVIDIA_RESERVE_MIB)  # type: ignore[arg-type]


def table_cuda_total_mib(model: GpuModel) -> int:
    """The board's CUDA total: its smallest published reading, else the rule (see the module docstring)."""
    if model.key in READINGS:
        return READINGS[model.key]
    if model.key in PRE_R510_KEYS:
        return model.memory_mib - PRE_R510_DRIFT_MIB
    return model.memory_mib - family_reserve_mib(model.vendor, model.compute_capability)


def current_reserve_mib(model: GpuModel) -> int:
    """What a current (R510+) driver keeps of the board's NVML total: the gap the live probe subtracts when it
    reads an NVML total without the driver's own `reserved` (an old saved profile, a plan file)."""
    if model.key in PRE_R510_KEYS:  # the table's total is not a current driver's: use the family's reserve
        return family_reserve_mib(model.vendor, model.compute_capability)
    return model.memory_mib - model.cuda_total_mib
