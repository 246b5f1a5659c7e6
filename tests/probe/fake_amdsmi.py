"""A pure-Python stand-in for the parts of the `amdsmi` bindings the AMD probe calls, replaying a fixture of
tests/fixtures/amdsmi (the bindings' return values for one node). Like the real module, errors derive from
`AmdSmiException`, queries before `amdsmi_init` raise `AmdSmiLibraryException`, and `unsupported` names queries
that raise it (a query the GPU or library does not support)."""

from __future__ import annotations

import json
from enum import IntEnum
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "fixtures" / "amdsmi"


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    pass


class AmdSmiMemoryType(IntEnum):
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


class FakeAmdSmi:
    AmdSmiException = AmdSmiException
    AmdSmiMemoryType = AmdSmiMemoryType

    def __init__(self, fixture: str | None, *, unsupported: tuple[str, ...] = (), init_fails: bool = False):
        self.devices = json.loads((FIXTURES / fixture).read_text())["devices"] if fixture else []
        self.unsupported, self.init_fails, self.started = unsupported, init_fails, False

    def amdsmi_init(self) -> None:
        if self.init_fails:
            raise AmdSmiLibraryException("Error code:\n\t34 | AMDSMI_STATUS_DRIVER_NOT_LOADED")
        self.started = True

    def amdsmi_shut_down(self) -> None:
        self.started = False

    def _device(self, query: str, handle: int) -> dict:
        if not self.started or query in self.unsupported:
            raise AmdSmiLibraryException(f"{query}: AMDSMI_STATUS_NOT_SUPPORTED")
        return self.devices[handle]

    def amdsmi_get_processor_handles(self) -> list[int]:
        self._device("handles", 0) if self.devices else None
        return list(range(len(self.devices)))

    def amdsmi_get_gpu_asic_info(self, handle: int) -> dict:
        return self._device("asic_info", handle)["asic_info"]

    def amdsmi_get_gpu_memory_total(self, handle: int, kind: AmdSmiMemoryType) -> int:
        assert kind is AmdSmiMemoryType.VRAM
        return self._device("memory_total", handle)["memory_total"]

    def amdsmi_get_gpu_device_uuid(self, handle: int) -> str:
        return self._device("uuid", handle)["uuid"]

    def amdsmi_get_gpu_device_bdf(self, handle: int) -> str:
        return self._device("bdf", handle)["bdf"]

    def amdsmi_get_gpu_driver_info(self, handle: int) -> dict:
        return self._device("driver_info", handle)["driver_info"]
