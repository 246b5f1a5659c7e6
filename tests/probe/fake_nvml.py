"""A pure-Python stand-in for the parts of `pynvml` the probe calls, with canned devices.

It behaves like the real module where the probe depends on it: errors are subclasses of `NVMLError`, queries
before `nvmlInit` raise `NVMLError_Uninitialized`, unsupported queries raise `NVMLError_NotSupported`, and
`nvmlDeviceGetNvLinkState` raises `NVMLError_InvalidArgument` past the last link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace


class NVMLError(Exception):
    pass


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801 - pynvml's names
    pass


class NVMLError_Uninitialized(NVMLError):  # noqa: N801
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class NVMLError_InvalidArgument(NVMLError):  # noqa: N801
    pass


class NVMLError_NotFound(NVMLError):  # noqa: N801
    pass


MIB = 1024**2


@dataclass
class FakeGpu:
    name: str
    memory_mib: int
    capability: tuple[int, int]
    uuid: str
    nvlinks: int = 0
    mig: bool = False
    mig_devices: list[FakeGpu] = field(default_factory=list)
    free_mib: int | None = None
    reserved_mib: int | None = None  # NVML v2's `reserved` (R510+); None: the v2 query is not supported


class FakeNvml:
    """`links`: pairs of NVML indices joined by NVLink; `pcie_p2p`: whether other pairs can read over PCIe
    (None: the P2P query is not supported, so the probe falls back to the common-ancestor query)."""

    NVML_NVLINK_MAX_LINKS = 18
    NVMLError = NVMLError
    NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    NVMLError_NotSupported = NVMLError_NotSupported
    nvmlMemory_v2 = 0x02000028  # pynvml's version tag of nvmlMemory_v2_t

    def __init__(self, gpus: list[FakeGpu], *, links: set[frozenset[int]] | None = None,
                 pcie_p2p: bool | None = True, init_error: NVMLError | None = None,
                 ancestor: int = 30, driver: str = "550.54.15") -> None:
        self.gpus = gpus
        self.driver = driver
        self.links = links or set()
        self.pcie_p2p = pcie_p2p
        self.init_error = init_error
        self.ancestor = ancestor
        self.initialized = False
        self.shutdowns = 0

    # --- lifecycle
    def nvmlInit(self) -> None:  # noqa: N802
        if self.init_error is not None:
            raise self.init_error
        self.initialized = True

    def nvmlShutdown(self) -> None:  # noqa: N802
        self._check()
        self.initialized = False
        self.shutdowns += 1

    def _check(self) -> None:
        if not self.initialized:
            raise NVMLError_Uninitialized("Uninitialized")

    # --- system
    def nvmlSystemGetDriverVersion(self) -> str:  # noqa: N802
        self._check()
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:  # noqa: N802
        self._check()
        return 12040

    # --- devices (a handle is the FakeGpu itself)
    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        self._check()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:  # noqa: N802
        self._check()
        return self.gpus[index]

    def nvmlDeviceGetName(self, gpu: FakeGpu) -> bytes:  # noqa: N802
        return gpu.name.encode()  # older pynvml versions return bytes

    def nvmlDeviceGetMemoryInfo(self, gpu: FakeGpu, version: int | None = None) -> SimpleNamespace:  # noqa: N802
        free = gpu.free_mib if gpu.free_mib is not None else gpu.memory_mib - 500
        used = gpu.memory_mib - free
        if not version:
            return SimpleNamespace(total=gpu.memory_mib * MIB, free=free * MIB, used=used * MIB)
        if version != self.nvmlMemory_v2 or gpu.reserved_mib is None:
            raise NVMLError_NotSupported("Not Supported")
        return SimpleNamespace(version=version, total=gpu.memory_mib * MIB, reserved=gpu.reserved_mib * MIB,
                               free=free * MIB, used=(used - gpu.reserved_mib) * MIB)

    def nvmlDeviceGetCudaComputeCapability(self, gpu: FakeGpu) -> tuple[int, int]:  # noqa: N802
        return gpu.capability

    def nvmlDeviceGetUUID(self, gpu: FakeGpu) -> str:  # noqa: N802
        return gpu.uuid

    def nvmlDeviceGetPciInfo(self, gpu: FakeGpu) -> SimpleNamespace:  # noqa: N802
        return SimpleNamespace(busId=f"00000000:{0x10 + self.gpus.index(gpu):02X}:00.0".encode())

    def nvmlDeviceGetMigMode(self, gpu: FakeGpu) -> list[int]:  # noqa: N802
        if gpu.capability < (8, 0):
            raise NVMLError_NotSupported("Not Supported")
        return [int(gpu.mig), int(gpu.mig)]

    def nvmlDeviceGetMaxMigDeviceCount(self, gpu: FakeGpu) -> int:  # noqa: N802
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, gpu: FakeGpu, slot: int) -> FakeGpu:  # noqa: N802
        if slot >= len(gpu.mig_devices):
            raise NVMLError_NotFound("Not Found")
        return gpu.mig_devices[slot]

    def nvmlDeviceGetNvLinkState(self, gpu: FakeGpu, link: int) -> int:  # noqa: N802
        if gpu.nvlinks == 0:
            raise NVMLError_NotSupported("Not Supported")
        if link >= gpu.nvlinks:
            raise NVMLError_InvalidArgument("Invalid Argument")
        return 1

    def nvmlDeviceGetP2PStatus(self, a: FakeGpu, b: FakeGpu, caps: int) -> int:  # noqa: N802
        if not isinstance(caps, int):
            raise TypeError("caps index must be an int (pynvml's READ constant is a tuple)")
        linked = frozenset({self.gpus.index(a), self.gpus.index(b)}) in self.links
        if caps == 2:
            return 0 if linked else 5
        if self.pcie_p2p is None:
            raise NVMLError_NotSupported("Not Supported")
        return 0 if self.pcie_p2p or linked else 3

    def nvmlDeviceGetTopologyCommonAncestor(self, a: FakeGpu, b: FakeGpu) -> int:  # noqa: N802
        return self.ancestor


def h100s(count: int = 8) -> list[FakeGpu]:
    return [FakeGpu("NVIDIA H100 80GB HBM3", 81559, (9, 0), f"GPU-aaaa{i:04d}-0000-0000-0000-000000000000",
                    nvlinks=18) for i in range(count)]


def all_pairs(count: int) -> set[frozenset[int]]:
    return {frozenset({i, j}) for i in range(count) for j in range(count) if i != j}
