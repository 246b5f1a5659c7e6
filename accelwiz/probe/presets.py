"""Named machines to plan for without probing them: `--system 8xH100-80GB`, and any `NxGPU` or `MxNxGPU`.

Each preset is a real, common instance type, so the host numbers (vCPUs, RAM) are the provider's published
ones; physical cores are vCPUs / 2 (two hyper-threads per core on these instances). GPU facts come from
`gpus.py`. Packages are left unknown (an empty mapping), so version rules stay silent for presets.

A composed spec names a GPU of the probe's table (`gpus.GPU_MODELS`, case-insensitive; a bare family name such as
`H100` when only one memory size of it has that prefix): `1xA100-80GB`, `4xL40S`, `2x8xA100-80GB`. More than 8
GPUs without a machine count are read as machines of 8 (`16xH100-80GB` = `2x8xH100-80GB`). Where a preset has the
same GPU and count, its host numbers are used; otherwise the host is ASSUMED (the profile's notes say so):
RAM twice the node's GPU memory rounded up to 16 GiB (at least 64 GiB), 16 vCPUs per GPU (at least 16),
NVLink (NVSwitch) between SXM GPUs, PCIe otherwise, one NUMA node up to 4 GPUs and two above.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import Literal

from accelwiz.errors import UsageError
from accelwiz.probe.gpus import GPU_MODELS, GpuModel, gpu_model
from accelwiz.probe.model import GpuInfo, HostInfo, MachineProfile, Topology
from accelwiz.probe.topology import NVLINK, PCIE_OK, linked_matrix, topology_from_matrix, uniform_matrix
from accelwiz.vocab import GIB

Interconnect = Literal["nvswitch", "pcie", "cube-mesh"]

# NVLink of the DGX-1 / p3dn.24xlarge "hybrid cube-mesh": each V100 links to 4 of the other 7 GPUs.
CUBE_MESH = {0: {1, 2, 3, 4}, 1: {0, 2, 3, 5}, 2: {0, 1, 3, 6}, 3: {0, 1, 2, 7},
             4: {0, 5, 6, 7}, 5: {1, 4, 6, 7}, 6: {2, 4, 5, 7}, 7: {3, 4, 5, 6}}


@dataclass(frozen=True)
class Preset:
    name: str
    gpu: str  # key in gpus.GPU_MODELS
    gpus_per_node: int
    interconnect: Interconnect
    instance: str  # where the host numbers come from
    cpu_model: str
    vcpus: int
    ram_gib: int
    numa_nodes: int | None
    num_machines: int = 1
    assumed_host: bool = False  # composed from an NxGPU spec: the host numbers are assumptions


PRESETS: tuple[Preset, ...] = (
    Preset("1xT4", "T4", 1, "pcie", "AWS g4dn.xlarge", "Intel Xeon Platinum 8259CL", 4, 16, 1),
    Preset("1xA10G", "A10G", 1, "pcie", "AWS g5.2xlarge", "AMD EPYC 7R32", 8, 32, 1),
    Preset("1xL4", "L4", 1, "pcie", "GCP g2-standard-8", "Intel Xeon (Cascade Lake)", 8, 32, 1),
    Preset("1xRTX4090", "RTX4090", 1, "pcie", "a typical workstation: Ryzen 9 7950X, 64 GiB",
           "AMD Ryzen 9 7950X 16-Core Processor", 32, 64, 1),
    Preset("2xV100-16GB", "V100-PCIE-16GB", 2, "pcie", "Azure Standard_NC12s_v3 (V100 PCIe, no NVLink)",
           "Intel Xeon E5-2690 v4", 12, 224, 1),
    Preset("8xV100-32GB", "V100-32GB", 8, "cube-mesh", "AWS p3dn.24xlarge (NVLink hybrid cube-mesh)",
           "Intel Xeon Platinum 8175M", 96, 768, 2),
    Preset("4xA100-40GB", "A100-40GB", 4, "nvswitch", "GCP a2-highgpu-4g (HGX A100, NVSwitch)",
           "Intel Xeon (Cascade Lake)", 48, 340, None),
    Preset("8xA100-80GB", "A100-80GB", 8, "nvswitch", "AWS p4de.24xlarge (NVSwitch)",
           "Intel Xeon Platinum 8275CL", 96, 1152, 2),
    Preset("8xH100-80GB", "H100-80GB", 8, "nvswitch", "AWS p5.48xlarge (NVSwitch)",
           "AMD EPYC 7R13", 192, 2048, 2),
    Preset("8xH200", "H200", 8, "nvswitch", "AWS p5e.48xlarge (NVSwitch)", "AMD EPYC 7R13", 192, 2048, 2),
    Preset("2x8xH100", "H100-80GB", 8, "nvswitch", "two AWS p5.48xlarge nodes (EFA between nodes)",
           "AMD EPYC 7R13", 192, 2048, 2, num_machines=2),
)
_BY_NAME = {preset.name.lower(): preset for preset in PRESETS}


MAX_GPUS_PER_MACHINE = 8
_SPEC = re.compile(r"^(?:(\d+)x)?(\d+)x([a-z0-9][a-z0-9-]*)$", re.IGNORECASE)


def find_preset(name: str) -> Preset | None:
    """The preset called `name` (ignoring case), or the machine an `NxGPU` / `MxNxGPU` spec composes; None when
    `name` is neither. A spec whose GPU is not in the table is a UsageError with a did-you-mean."""
    key = name.strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    match = _SPEC.match(key)
    if match is None:
        return None
    machines_text, count_text, gpu_text = match.groups()
    machines, count = int(machines_text or 1), int(count_text)
    gpu = _gpu_for(gpu_text, name)
    if machines_text is None and count > MAX_GPUS_PER_MACHINE:
        if count % MAX_GPUS_PER_MACHINE:
            raise UsageError(f"`{name}`: {count} GPUs do not split into machines of {MAX_GPUS_PER_MACHINE}",
                             hint=f"write machines x GPUs per machine, e.g. 2x8x{gpu.key}")
        machines, count = count // MAX_GPUS_PER_MACHINE, MAX_GPUS_PER_MACHINE
    if machines < 1 or not 1 <= count <= MAX_GPUS_PER_MACHINE:
        raise UsageError(f"`{name}`: {count} GPUs per machine", hint=f"1 to {MAX_GPUS_PER_MACHINE} per machine")
    canonical = f"{count}x{gpu.key}" if machines == 1 else f"{machines}x{count}x{gpu.key}"
    known = next((p for p in PRESETS if p.gpu == gpu.key and p.gpus_per_node == count), None)
    if known is not None:
        return replace(known, name=canonical, num_machines=machines)
    return _assumed(canonical, gpu, count, machines)


def _gpu_for(text: str, spec: str) -> GpuModel:
    """The table entry for a GPU name: its key, or a family name with one memory size (H100 -> H100-80GB)."""
    by_key = {m.key.lower(): m for m in GPU_MODELS}
    if text in by_key:
        return by_key[text]
    sized = [m for m in GPU_MODELS if re.fullmatch(re.escape(text) + r"-\d+GB", m.key, re.IGNORECASE)]
    if len(sized) == 1:
        return sized[0]
    if sized:
        raise UsageError(f"`{spec}`: {text.upper()} comes in {' and '.join(m.key for m in sized)}",
                         hint=f"write e.g. {spec.lower().replace(text, sized[-1].key)}")
    close = close_gpu_keys(text)
    prefix = spec.strip()[: -len(text)]  # "1x" or "2x8x": the suggestions are whole specs
    raise UsageError(f"`{spec}`: unknown GPU `{spec.strip()[-len(text):]}`",
                     hint=(f"did you mean {', '.join(f'`{prefix}{key}`' for key in close)}? " if close else "")
                     + "`accelwiz probe --list-gpus` lists the GPUs, `accelwiz probe --list-presets` the presets")


def close_gpu_keys(text: str, n: int = 3) -> list[str]:
    """GPU table keys that look like the GPU token `text`, best first. Each key is compared whole and by its
    family (H100-80GB also as H100), so `H10O` finds H100-80GB before A10, which shares only "10" with it."""
    wanted = text.strip().upper()
    scores: dict[str, float] = {}
    for model in GPU_MODELS:
        family = re.sub(r"-\d+GB$", "", model.key.upper())
        scores[model.key] = max(difflib.SequenceMatcher(None, wanted, name).ratio() for name in {model.key.upper(),
                                                                                                  family})
    ranked = sorted((key for key, score in scores.items() if score >= 0.5), key=lambda key: -scores[key])
    return ranked[:n]


def _assumed(name: str, gpu: GpuModel, count: int, machines: int) -> Preset:
    gib_of_gpus = gpu.memory_bytes * count / GIB
    ram = max(64, -(-int(2 * gib_of_gpus) // 16) * 16)
    interconnect: Interconnect = "nvswitch" if gpu.nvlink and count > 1 else "pcie"
    return Preset(name, gpu.key, count, interconnect, "no instance: host numbers assumed (see presets.py)",
                  "unknown (assumed)", max(16, 16 * count), ram, 1 if count <= 4 else 2,
                  num_machines=machines, assumed_host=True)


def close_preset_names(name: str) -> list[str]:
    """Preset names that look like `name`, for a did-you-mean hint."""
    wanted = name.strip().lower()
    prefixed = [n for n in _BY_NAME if n.startswith(wanted)]  # "8xh100" -> "8xh100-80gb" first
    similar = difflib.get_close_matches(wanted, list(_BY_NAME), n=3, cutoff=0.5)
    return [_BY_NAME[n].name for n in dict.fromkeys(prefixed + similar)][:3]


def preset_profile(preset: Preset) -> MachineProfile:
    """The profile of one node of `preset` (with `num_machines` identical nodes)."""
    model = gpu_model(preset.gpu)
    gpus = [GpuInfo(index=i, nvml_index=i, name=model.name, memory_total_bytes=model.memory_bytes,
                    cuda_total_bytes=model.cuda_total_bytes,
                    compute_capability=model.compute_capability, nvlink_links=model.nvlink_links,
                    vendor=model.vendor, arch=model.arch if model.vendor == "amd" else None)
            for i in range(preset.gpus_per_node)]
    host = HostInfo(cpu_model=preset.cpu_model, cpu_physical_cores=preset.vcpus // 2,
                    cpu_logical_cores=preset.vcpus, memory_total_bytes=preset.ram_gib * GIB,
                    numa_nodes=preset.numa_nodes)
    return MachineProfile(source="preset", name=preset.name, num_machines=preset.num_machines, gpus=gpus,
                          topology=_topology(preset), host=host,
                          notes=[f"host RAM {preset.ram_gib} GiB and {preset.vcpus} vCPUs ASSUMED (no preset "
                                 "has this GPU and count; pass a profile from `accelwiz probe --save`)"]
                          if preset.assumed_host else [f"preset modelled on {preset.instance}"])


def _topology(preset: Preset) -> Topology:
    count = preset.gpus_per_node
    if preset.interconnect == "nvswitch":
        return topology_from_matrix(uniform_matrix(count, NVLINK))
    if preset.interconnect == "cube-mesh":
        return topology_from_matrix(linked_matrix(count, CUBE_MESH))
    return topology_from_matrix(uniform_matrix(count, PCIE_OK))
