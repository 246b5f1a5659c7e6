"""Probe this machine: GPUs (NVML), host (psutil, /proc, /sys) and installed packages, into one profile."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from accelwiz.probe.host import probe_host
from accelwiz.probe.model import MachineProfile
from accelwiz.probe.nvidia import probe_gpus
from accelwiz.probe.packages import installed_packages, torch_is_cuda_build


def probe_local(disk_path: str | os.PathLike[str] | None = ".", *, nvml: Any = None, amdsmi: Any = None,
                environ: Mapping[str, str] | None = None) -> MachineProfile:
    """A profile of this node; `disk_path` is where NVMe offload files would go (None skips the disk). AMD GPUs
    are probed through AMD SMI when NVML finds none."""
    gpus = probe_gpus(nvml, environ)
    if not gpus.gpus:
        from accelwiz.probe.amd import probe_amd_gpus

        amd = probe_amd_gpus(amdsmi, environ)
        if amd.gpus:
            gpus = amd
        else:
            gpus.notes.extend(amd.notes)
    host = probe_host(disk_path)
    packages = installed_packages()
    torch_cuda = torch_is_cuda_build(packages.get("torch"))
    notes = list(gpus.notes)
    if gpus.gpus and torch_cuda is False:
        notes.append(f"torch {packages['torch']} is a CPU-only build: training will not use the GPUs")
    return MachineProfile(
        source="probe", name=host.hostname, gpus=gpus.gpus, topology=gpus.topology, host=host,
        driver_version=gpus.driver_version, cuda_driver_version=gpus.cuda_driver_version,
        packages=packages, torch_cuda=torch_cuda, notes=notes,
    )
