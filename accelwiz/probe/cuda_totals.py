"""What CUDA lets a process allocate on a GPU: the one owner of "capacity", the figure every verdict judges.

NVML's total (`nvidia-smi`, the table's `memory_mib`) is not what torch can reach. Since driver R510 it includes the
memory the driver keeps for itself (page tables, the GSP firmware heap), which `nvidia-smi -q` shows as "Reserved";
`cudaMemGetInfo`'s total (`torch.cuda.mem_get_info()[1]`, the "total capacity" of torch's OOM message) leaves it
out. The capacity here is that CUDA total, in this order of evidence (docs/gpu-cuda-totals.md has every reading):

1. the live driver's own figure: NVML v2's `total - reserved` (nvmlMemory_v2_t, R510+). On the machines where both
   were published they agree to 1 MiB: H100 HBM3 81559 - 454 = 81105 MiB vs deviceQuery's 81105.7 (R565); A100-
   SXM4-40GB 40960 - 620 = 40340 vs 40339.x; A100-SXM4-80GB 81920 - 763 = 81157 vs 81157.8 (R555);
   before R510 the v1 total already left the reserve out (A100-40GB "40536MiB" vs an OOM's "39.59 GiB");
2. a published CUDA reading of the board (cuda_readings.READINGS: the smallest, so "fits" errs toward "does not
   fit");
3. the rule: NVML's total less the largest reserve read on a board of its family (cuda_readings.FAMILY_RESERVE_MIB).
"""

from __future__ import annotations

MIB = 1024**2


def cuda_total_bytes(name: str, nvml_total: int, vendor: str = "nvidia",
                     capability: tuple[int, int] = (0, 0)) -> int:
    """The CUDA total of a GPU known only by its name and NVML total (no live `reserved`): the table's figure
    where the total is the table's, else the total less the board's (or its family's) current reserve."""
    from accelwiz.probe.cuda_readings import current_reserve_mib, family_reserve_mib
    from accelwiz.probe.gpus import find_gpu

    if not nvml_total:
        return 0
    model = find_gpu(name)
    if model is not None and nvml_total == model.memory_bytes:
        return model.cuda_total_bytes
    reserve = current_reserve_mib(model) if model is not None else family_reserve_mib(vendor, capability)
    return max(nvml_total - reserve * MIB, 0)


def capacity_of(gpu: str | None) -> int | None:
    """What CUDA can allocate on the GPU a --system key or device name names (the table's figure); None unknown."""
    from accelwiz.probe.gpus import find_gpu

    model = find_gpu(gpu)
    return model.cuda_total_bytes if model else None
