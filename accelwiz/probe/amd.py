"""Probe AMD GPUs through AMD SMI's Python bindings (the `amdsmi` package), without importing torch.

Used when NVML finds no GPU. The calls are the ones of amdsmi 6.x/7.x (amdsmi_interface.py):
`amdsmi_get_processor_handles`, `amdsmi_get_gpu_asic_info` (its `market_name` and `target_graphics_version`, which
the bindings format as "gfx942"), `amdsmi_get_gpu_memory_total(handle, AmdSmiMemoryType.VRAM)` in bytes,
`amdsmi_get_gpu_device_uuid`, `amdsmi_get_gpu_device_bdf` and `amdsmi_get_gpu_driver_info`. Precision support
follows the gfx target (gpu_specs.AMD_PRECISION), so a board the table does not name is still judged right.

Visibility: HIP honours HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES (indices, in that order), after
ROCR_VISIBLE_DEVICES, which this probe applies first. Like the NVIDIA probe, no GPU is a normal answer.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

from accelwiz.probe.gpu_specs import AMD_CAPABILITY
from accelwiz.probe.gpus import match_gpu_name
from accelwiz.probe.model import GpuInfo, Topology
from accelwiz.probe.nvidia import GpuProbe
from accelwiz.probe.visible import PhysicalGpu, select_visible


def probe_amd_gpus(amdsmi: Any = None, environ: Mapping[str, str] | None = None) -> GpuProbe:
    """Probe AMD GPUs with `amdsmi` (default: the amdsmi module), honouring the ROCm visibility variables."""
    environ = os.environ if environ is None else environ
    if amdsmi is None:
        try:
            import amdsmi
        except (ImportError, OSError):  # not installed, or installed without the ROCm library it wraps
            return GpuProbe(topology=Topology(summary="unknown"), notes=[])
    try:
        amdsmi.amdsmi_init()
    except amdsmi.AmdSmiException as exc:
        return GpuProbe(notes=[f"AMD SMI could not start ({exc}): AMD GPUs were not probed"])
    try:
        return _probe_initialized(amdsmi, environ)
    except amdsmi.AmdSmiException as exc:
        return GpuProbe(topology=Topology(summary="unknown"),
                        notes=[f"AMD SMI failed while probing GPUs ({exc}): GPUs unknown"])
    finally:
        with contextlib.suppress(amdsmi.AmdSmiException):
            amdsmi.amdsmi_shut_down()


def _probe_initialized(amdsmi: Any, environ: Mapping[str, str]) -> GpuProbe:
    handles = list(amdsmi.amdsmi_get_processor_handles())
    if not handles:
        return GpuProbe(notes=["AMD SMI found no GPU"])
    devices = [_read_device(amdsmi, index, handle) for index, handle in enumerate(handles)]
    result = GpuProbe(driver_version=_call(amdsmi, lambda: amdsmi.amdsmi_get_gpu_driver_info(handles[0])
                                           .get("driver_version")))
    visible = list(range(len(devices)))
    for variable in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in environ
                     else "CUDA_VISIBLE_DEVICES"):
        physical = [PhysicalGpu(position) for position in range(len(visible))]
        selections, notes = select_visible(physical, environ.get(variable))
        result.notes.extend(note.replace("CUDA_VISIBLE_DEVICES", variable) for note in notes)
        visible = [visible[s.nvml_index] for s in selections]
    result.gpus = [devices[i].model_copy(update={"index": position}) for position, i in enumerate(visible)]
    result.topology = Topology(summary="single GPU" if len(result.gpus) == 1 else "unknown"
                               if result.gpus else "none")
    if len(result.gpus) > 1:
        result.notes.append("AMD GPUs: the Infinity Fabric topology is not probed (rocm-smi --showtopo shows it)")
    return result


def _read_device(amdsmi: Any, index: int, handle: Any) -> GpuInfo:
    asic = _call(amdsmi, lambda: amdsmi.amdsmi_get_gpu_asic_info(handle)) or {}
    name = str(asic.get("market_name") or f"AMD GPU {index}")
    gfx = str(asic.get("target_graphics_version") or "").lower() or None
    known = match_gpu_name(name)
    if gfx is None and known is not None:
        gfx = known.arch
    memory = _call(amdsmi, lambda: amdsmi.amdsmi_get_gpu_memory_total(handle, amdsmi.AmdSmiMemoryType.VRAM))
    return GpuInfo(index=index, nvml_index=index, name=name, vendor="amd", arch=gfx,
                   memory_total_bytes=int(memory or 0), compute_capability=AMD_CAPABILITY.get(gfx or "", (0, 0)),
                   uuid=_call(amdsmi, lambda: amdsmi.amdsmi_get_gpu_device_uuid(handle)),
                   pci_bus_id=_call(amdsmi, lambda: amdsmi.amdsmi_get_gpu_device_bdf(handle)))


def _call(amdsmi: Any, query: Any) -> Any:
    """One AMD SMI query; a query the GPU or library does not support answers None."""
    try:
        return query()
    except amdsmi.AmdSmiException:
        return None
