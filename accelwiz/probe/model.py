"""The machine profile: what `accelwiz probe --json` prints and what `--system` reads back.

This is the contract between the probe (which fills it from NVML and psutil), the presets (which fill it from
a table of GPU models), and everything that plans for a machine: hardware rules in `check`, `estimate`, `init`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from accelwiz.plugin_free import BuiltWithoutPlugins

PROFILE_SCHEMA_VERSION = 1


class _Frozen(BaseModel, metaclass=BuiltWithoutPlugins):  # no plugin scan at start-up
    model_config = ConfigDict(frozen=True, extra="forbid")


class GpuInfo(_Frozen):
    index: int
    name: str
    memory_total_bytes: int = Field(description="What NVML (nvidia-smi) or AMD SMI reports as total: shown, "
                                                "not judged.")
    memory_free_bytes: int | None = None
    cuda_total_bytes: int | None = Field(
        None, description="What cudaMemGetInfo reports as total, the most torch can allocate: NVML's total less the "
                          "driver's reserve (the probe reads it; a preset takes the GPU table's). None: derived from "
                          "the name and the total (probe/cuda_totals.py).")
    compute_capability: tuple[int, int] = Field(
        description="NVIDIA's compute capability; on AMD what torch reports for the gfx target (gfx942 -> 9.4).")
    uuid: str | None = None
    pci_bus_id: str | None = None
    mig_enabled: bool = False
    nvlink_links: int = Field(0, description="Active NVLink links on this GPU (AMD: Infinity Fabric links).")
    nvml_index: int | None = Field(
        None, description="NVML (PCI bus order) index; `index` is the CUDA index, which differs when "
                          "CUDA_VISIBLE_DEVICES selects or reorders GPUs.")
    vendor: Literal["nvidia", "amd"] = "nvidia"
    arch: str | None = Field(None, description="AMD's gfx target (gfx90a, gfx942); precision support follows it.")

    @property
    def capacity_bytes(self) -> int:
        """What a verdict judges this GPU on: the CUDA total. A MIG instance without the driver's figure keeps its
        NVML total (no reading of an instance's reserve)."""
        if self.cuda_total_bytes is not None:
            return self.cuda_total_bytes
        if self.mig_enabled:
            return self.memory_total_bytes
        from accelwiz.probe.cuda_totals import cuda_total_bytes

        return cuda_total_bytes(self.name, self.memory_total_bytes, self.vendor, self.compute_capability)

    def _amd(self, which: int) -> bool:
        from accelwiz.probe.gpu_specs import AMD_PRECISION

        return AMD_PRECISION.get(self.arch or "", (False, False))[which]

    @property
    def native_bf16(self) -> bool:
        """Ampere (8.0) and newer compute bf16 in hardware; older GPUs only emulate it, slowly. AMD: CDNA and newer."""
        return self._amd(0) if self.vendor == "amd" else self.compute_capability >= (8, 0)

    @property
    def tf32(self) -> bool:
        return self.vendor == "nvidia" and self.compute_capability >= (8, 0)

    @property
    def fp8(self) -> bool:
        """Ada (8.9) and Hopper (9.0) and newer have fp8 tensor cores; AMD from CDNA 3 (gfx942)."""
        return self._amd(1) if self.vendor == "amd" else self.compute_capability >= (8, 9)

    @property
    def tensor_cores(self) -> bool:
        return self.vendor == "amd" or self.compute_capability >= (7, 0)

    @property
    def architecture(self) -> str:
        """How messages name the GPU's generation: `compute capability 7.0`, or AMD's `gfx90a`."""
        if self.vendor == "amd" and self.arch:
            return self.arch
        return "compute capability " + ".".join(map(str, self.compute_capability))


class Topology(_Frozen):
    summary: Literal["none", "single GPU", "NVLink all-to-all", "NVLink pairs", "NVLink partial", "PCIe only",
                     "unknown"] = "unknown"
    p2p: list[list[str]] = Field(default_factory=list,
                                 description="P2P status between GPU i and j: 'OK' (PCIe), 'NVLink', 'no', "
                                             "'?' (unknown), or 'X' (the GPU itself).")


class DiskInfo(_Frozen):
    path: str
    total_bytes: int
    free_bytes: int
    device: str | None = None
    is_nvme: bool | None = None


class HostInfo(_Frozen):
    hostname: str | None = None
    cpu_model: str | None = None
    cpu_physical_cores: int | None = None
    cpu_logical_cores: int | None = None
    memory_total_bytes: int
    memory_available_bytes: int | None = None
    swap_total_bytes: int | None = None
    numa_nodes: int | None = None
    disk: DiskInfo | None = None


class MachineProfile(_Frozen):
    """One node (and how many identical nodes the plan is for)."""

    schema_version: int = PROFILE_SCHEMA_VERSION
    source: Literal["probe", "preset", "file"] = "probe"
    name: str | None = Field(None, description="Preset name, or the host name for a probe.")
    num_machines: int = Field(1, ge=1, description="Identical nodes in the plan (2 for the 2x8xH100 preset).")
    gpus: list[GpuInfo] = Field(default_factory=list, description="GPUs of ONE node, as visible to CUDA.")
    topology: Topology = Topology()
    host: HostInfo
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    packages: dict[str, str | None] = Field(default_factory=dict,
                                            description="Installed versions (None = not installed).")
    torch_cuda: bool | None = Field(None, description="Whether the installed torch is a CUDA build.")
    notes: list[str] = Field(default_factory=list)

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)

    @property
    def min_gpu_memory_bytes(self) -> int | None:
        """The smallest GPU's NVML total, as nvidia-smi shows it; verdicts judge `gpu_capacity_bytes`."""
        return min((g.memory_total_bytes for g in self.gpus), default=None)

    @property
    def gpu_capacity_bytes(self) -> int | None:
        """What every GPU verdict judges against: the smallest GPU's CUDA total (GpuInfo.capacity_bytes)."""
        return min((g.capacity_bytes for g in self.gpus), default=None)

    @property
    def native_bf16(self) -> bool:
        return bool(self.gpus) and all(g.native_bf16 for g in self.gpus)

    @property
    def fp8(self) -> bool:
        return bool(self.gpus) and all(g.fp8 for g in self.gpus)

    def package_known(self, name: str) -> bool:
        """Whether the profile knows about `name` (a probe lists every tracked package, a preset none)."""
        return name in self.packages

    def package_missing(self, name: str) -> bool:
        """Known to be not installed (as opposed to unknown)."""
        return name in self.packages and not self.packages[name]

    def installed_older_than(self, name: str, required: str) -> str | None:
        """The installed version of `name` when it is known and older than `required`, else None."""
        from accelwiz.probe.versions import version_at_least

        version = self.packages.get(name)
        return version if version and version_at_least(version, required) is False else None
