"""One builder for the machine profiles tests check against, and a way to pin what `--system local` probes.

Tests must not branch on the machine they run on (`if load_system("local").gpus:` ran half the assertions here
and the other half on a GPU machine, so neither machine ran them all). Build the machine instead:

    machine()                      # CPU only, 32 GiB of RAM
    machine(8, "H100-80GB")        # one node of 8 x H100, as the preset describes it
    machine(8, "H100-80GB", machines=2, ram_gib=2048, packages={"deepspeed": "0.13.1"})

and, for commands that probe this machine themselves (`init` without --system, `run`), pin the probe:

    def test_x(pin_local):
        pin_local(machine())       # `local` is now that CPU box, on every machine
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from accelwiz.probe.model import DiskInfo, HostInfo, MachineProfile, Topology
from accelwiz.vocab import GIB


def machine(gpus: int = 0, gpu: str = "H100-80GB", *, machines: int = 1, ram_gib: int = 32,
            gpu_gib: float | None = None, packages: dict[str, str | None] | None = None,
            disk: DiskInfo | None = None, name: str | None = None) -> MachineProfile:
    """A profile of one node: `gpus` GPUs of the presets' GPU table (`gpu` is its key), or none. `gpu_gib`
    overrides the GPUs' memory (a 40 GiB H100 that does not exist, to put a budget exactly where a test needs)."""
    host = HostInfo(hostname=name, cpu_logical_cores=16, cpu_physical_cores=8, memory_total_bytes=ram_gib * GIB,
                    disk=disk)
    if gpus == 0:
        return MachineProfile(source="file", name=name or "cpu-box", num_machines=machines, gpus=[],
                              topology=Topology(summary="none"), host=host, packages=packages or {},
                              torch_cuda=False)
    from accelwiz.probe.presets import find_preset, preset_profile

    preset = find_preset(f"{gpus}x{gpu}")
    assert preset is not None, f"no GPU {gpu!r} in the presets' table"
    profile = preset_profile(preset)
    budget = None if gpu_gib is None else int(gpu_gib * GIB)  # judged as is: CUDA's total too, no reserve
    gpu_list = profile.gpus if budget is None else [
        g.model_copy(update={"memory_total_bytes": budget, "cuda_total_bytes": budget}) for g in profile.gpus]
    return profile.model_copy(update={"source": "file", "name": name or preset.name, "num_machines": machines,
                                      "gpus": gpu_list, "host": host, "packages": packages or {},
                                      "torch_cuda": True})


@pytest.fixture()
def pin_local(monkeypatch) -> Callable[[MachineProfile], MachineProfile]:
    """Make `--system local` (and every command that probes this machine) see the given profile."""

    def pin(profile: MachineProfile) -> MachineProfile:
        monkeypatch.setattr("accelwiz.probe.local.probe_local", lambda *args, **kwargs: profile)
        # the wizard keeps the machines it loaded for the life of the process: start it afresh
        monkeypatch.setattr("accelwiz.wizard.flow._MACHINES", {})
        return profile

    return pin
