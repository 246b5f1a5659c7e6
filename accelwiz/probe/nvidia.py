"""Probe NVIDIA GPUs through NVML (nvidia-ml-py), without importing torch.

NVML ships with the driver, answers in milliseconds and creates no CUDA context, so probing never takes
memory from a GPU that is already training. The NVML module is a parameter so tests can pass a pure-Python
stand-in with canned devices; by default it is `pynvml`, imported on first use.

"No GPU" is a normal answer: a missing driver, a missing NVML library or zero devices give an empty list
and a note, never an exception.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accelwiz.probe.gpus import match_gpu_name
from accelwiz.probe.model import GpuInfo, Topology
from accelwiz.probe.topology import NO_P2P, NVLINK, PCIE_OK, SELF, UNKNOWN, topology_from_matrix
from accelwiz.probe.visible import PhysicalGpu, Selection, select_visible

# Written out because pynvml 13 defines NVML_P2P_CAPS_INDEX_READ as the tuple `(0,)` (a stray trailing comma).
P2P_CAPS_READ, P2P_CAPS_NVLINK = 0, 2
P2P_STATUS_OK = 0
# nvmlDeviceGetTopologyCommonAncestor levels up to "several PCIe switches" still allow P2P over PCIe;
# a host bridge, a NUMA node or the inter-socket link in between usually does not.
TOPOLOGY_MULTIPLE = 20


@dataclass
class GpuProbe:
    """What NVML says about this node's GPUs, as CUDA will see them."""

    gpus: list[GpuInfo] = field(default_factory=list)
    topology: Topology = field(default_factory=lambda: Topology(summary="none"))
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class _Device:
    """One physical GPU read from NVML, before CUDA_VISIBLE_DEVICES picks from the list."""

    handle: Any
    info: GpuInfo
    mig: dict[str, GpuInfo] = field(default_factory=dict)  # MIG instance UUID -> the instance as a device


def probe_gpus(nvml: Any = None, environ: Mapping[str, str] | None = None) -> GpuProbe:
    """Probe the GPUs with `nvml` (default: the pynvml module, or any object with its functions), honouring
    CUDA_VISIBLE_DEVICES from `environ` (default: os.environ)."""
    environ = os.environ if environ is None else environ
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            return GpuProbe(topology=Topology(summary="unknown"),
                            notes=["nvidia-ml-py is not installed, so GPUs were not probed"])
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        return GpuProbe(notes=[_init_failure(nvml, exc)])
    try:
        return _probe_initialized(nvml, environ)
    except nvml.NVMLError as exc:  # a device vanished or the driver failed mid-probe (Xid errors, resets)
        return GpuProbe(topology=Topology(summary="unknown"),
                        notes=[f"NVML failed while probing GPUs ({exc}): GPUs unknown"])
    finally:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()


def _init_failure(nvml: Any, exc: Exception) -> str:
    if isinstance(exc, getattr(nvml, "NVMLError_LibraryNotFound", ())):
        return "no NVIDIA driver found (NVML library not found): no GPU"
    if isinstance(exc, getattr(nvml, "NVMLError_DriverNotLoaded", ())):
        return "the NVIDIA driver is installed but not loaded: no GPU"
    return f"NVML could not start ({exc}): GPUs were not probed"


def _probe_initialized(nvml: Any, environ: Mapping[str, str]) -> GpuProbe:
    result = GpuProbe(
        driver_version=_call(nvml, nvml.nvmlSystemGetDriverVersion, convert=_text),
        cuda_driver_version=_call(nvml, nvml.nvmlSystemGetCudaDriverVersion, convert=_cuda_version))
    pre_r510 = _driver_major(result.driver_version) < 510
    devices = [_read_device(nvml, index, result.notes, pre_r510)
               for index in range(_call(nvml, nvml.nvmlDeviceGetCount, default=0))]
    if not devices:
        result.notes.append("NVML found no GPU")
        return result
    physical = [PhysicalGpu(index, d.info.uuid, tuple(d.mig)) for index, d in enumerate(devices)]
    selections, notes = select_visible(physical, environ.get("CUDA_VISIBLE_DEVICES"))
    result.notes.extend(notes)
    result.gpus = [_as_visible(devices[s.nvml_index], s, position) for position, s in enumerate(selections)]
    handles = [None if s.mig_uuid else devices[s.nvml_index].handle for s in selections]
    if result.gpus:
        result.topology = topology_from_matrix(_p2p_matrix(nvml, handles))
    result.notes.extend(_visibility_notes(result.gpus, selections, environ))
    return result


def _read_device(nvml: Any, index: int, notes: list[str], pre_r510: bool) -> _Device:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    name = _call(nvml, nvml.nvmlDeviceGetName, handle, convert=_text, default=f"GPU {index}")
    memory = _call(nvml, nvml.nvmlDeviceGetMemoryInfo, handle)
    capability = _call(nvml, nvml.nvmlDeviceGetCudaComputeCapability, handle, convert=tuple)
    if capability is None:
        known = match_gpu_name(name)
        capability = known.compute_capability if known else (0, 0)
        notes.append(f"could not read the compute capability of GPU {index} ({name})"
                     + (f"; assuming {capability[0]}.{capability[1]} from its name" if known else ""))
    if memory is None:
        notes.append(f"could not read the memory of GPU {index} ({name}); it is shown as 0")
    mig_mode = _call(nvml, nvml.nvmlDeviceGetMigMode, handle, default=[0, 0])
    info = GpuInfo(
        index=index, nvml_index=index, name=name, compute_capability=capability,
        memory_total_bytes=int(getattr(memory, "total", 0)), memory_free_bytes=_free(memory),
        cuda_total_bytes=_cuda_total(nvml, handle, memory, pre_r510),
        uuid=_call(nvml, nvml.nvmlDeviceGetUUID, handle, convert=_text),
        pci_bus_id=_call(nvml, nvml.nvmlDeviceGetPciInfo, handle, convert=lambda p: _text(p.busId)),
        mig_enabled=bool(mig_mode[0]), nvlink_links=_active_nvlinks(nvml, handle),
    )
    device = _Device(handle, info)
    if info.mig_enabled:
        device.mig = _mig_instances(nvml, handle, info, pre_r510)
    return device


def _mig_instances(nvml: Any, handle: Any, parent: GpuInfo, pre_r510: bool) -> dict[str, GpuInfo]:
    instances = {}
    for slot in range(_call(nvml, nvml.nvmlDeviceGetMaxMigDeviceCount, handle, default=0)):
        mig = _call(nvml, nvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
        uuid = mig and _call(nvml, nvml.nvmlDeviceGetUUID, mig, convert=_text)
        if not uuid:
            continue  # an empty slot: NVML answers NotFound
        memory = _call(nvml, nvml.nvmlDeviceGetMemoryInfo, mig)
        instances[uuid] = parent.model_copy(update={
            "name": _call(nvml, nvml.nvmlDeviceGetName, mig, convert=_text, default=f"{parent.name} MIG"),
            "uuid": uuid, "memory_total_bytes": int(getattr(memory, "total", 0)),
            "memory_free_bytes": _free(memory), "nvlink_links": 0,
            "cuda_total_bytes": _cuda_total(nvml, mig, memory, pre_r510),
        })
    return instances


def _as_visible(device: _Device, selection: Selection, cuda_index: int) -> GpuInfo:
    chosen = device.mig[selection.mig_uuid] if selection.mig_uuid else device.info
    return chosen.model_copy(update={"index": cuda_index})


def _cuda_total(nvml: Any, handle: Any, memory: Any, pre_r510: bool) -> int | None:
    """What cudaMemGetInfo will report as total, read without a CUDA context: NVML v2's total less the driver's
    `reserved` (nvmlMemory_v2_t, R510+; `nvidia-smi -q`'s "Reserved"), which matched deviceQuery to 1 MiB wherever
    both were published (probe/cuda_totals.py). Before R510 the v1 total already left the reserve out. None where
    neither answers: GpuInfo.capacity_bytes then takes the GPU table's reserve."""
    if memory is None:
        return None
    if pre_r510:
        return int(memory.total)
    version = getattr(nvml, "nvmlMemory_v2", None)
    full = _call(nvml, nvml.nvmlDeviceGetMemoryInfo, handle, version) if version is not None else None
    reserved = getattr(full, "reserved", None)
    return None if reserved is None else int(full.total) - int(reserved)


def _driver_major(version: str | None) -> int:
    """550 for "550.54.15"; unknown counts as current (R510+), where NVML v2 answers or the table's reserve applies."""
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else 10**6


def _active_nvlinks(nvml: Any, handle: Any) -> int:
    active = 0
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            active += bool(nvml.nvmlDeviceGetNvLinkState(handle, link))
        except nvml.NVMLError:
            break  # NotSupported (no NVLink at all) or InvalidArgument (past the last link)
    return active


def _p2p_matrix(nvml: Any, handles: list[Any]) -> list[list[str]]:
    """Pairwise P2P: NVLink if NVML says the NVLink path is OK, else 'OK' if PCIe reads work, else 'no'.

    MIG instances (handle None) cannot talk peer-to-peer at all.
    """
    def pair(a: Any, b: Any) -> str:
        if a is None or b is None:
            return NO_P2P
        if _call(nvml, nvml.nvmlDeviceGetP2PStatus, a, b, P2P_CAPS_NVLINK) == P2P_STATUS_OK:
            return NVLINK
        read = _call(nvml, nvml.nvmlDeviceGetP2PStatus, a, b, P2P_CAPS_READ)
        if read is not None:
            return PCIE_OK if read == P2P_STATUS_OK else NO_P2P
        ancestor = _call(nvml, nvml.nvmlDeviceGetTopologyCommonAncestor, a, b)
        if ancestor is None:
            return UNKNOWN
        return PCIE_OK if ancestor <= TOPOLOGY_MULTIPLE else NO_P2P

    return [[SELF if i == j else pair(a, b) for j, b in enumerate(handles)] for i, a in enumerate(handles)]


def _visibility_notes(gpus: list[GpuInfo], selections: list[Selection],
                      environ: Mapping[str, str]) -> list[str]:
    notes = [f"GPU {g.index} ({g.name}) has MIG enabled: a CUDA process sees only one MIG instance and NCCL "
             "cannot span instances; select one with CUDA_VISIBLE_DEVICES=MIG-<uuid>"
             for g, s in zip(gpus, selections, strict=True) if g.mig_enabled and s.mig_uuid is None]
    if len({g.name for g in gpus}) > 1 and environ.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
        notes.append("different GPU models: CUDA's default FASTEST_FIRST order may differ from this PCI "
                     "order; set CUDA_DEVICE_ORDER=PCI_BUS_ID so indices mean the same everywhere")
    return notes


def _call(nvml: Any, function: Callable[..., Any], *args: Any,
          convert: Callable[[Any], Any] | None = None, default: Any = None) -> Any:
    """Call an NVML query; a query the GPU or driver does not support answers `default`."""
    try:
        value = function(*args)
    except nvml.NVMLError:
        return default
    return convert(value) if convert is not None else value


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _free(memory: Any) -> int | None:
    free = getattr(memory, "free", None)
    return int(free) if free is not None else None


def _cuda_version(value: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return f"{value // 1000}.{value % 1000 // 10}"
