"""What `accelwiz estimate` judges against: the GPU memory, the GPU and node counts, and the host's RAM.

--gpu-memory, else --system (a preset or a profile file), else this machine's GPUs (probed only when an NVIDIA
driver is present: estimating for another machine is normal, and the probe imports NVML). A GPU is judged on what
CUDA lets torch allocate there (MachineProfile.gpu_capacity_bytes: NVML's total less the driver's reserve,
probe/cuda_totals.py); --gpu-memory is the user's own number and is judged as given, nothing subtracted. A
machine without GPUs (`--system local` on a CPU box, a plan made for one) is a CPU target: its processes (`--gpus`,
else the plan's) train on the CPU and are judged on its RAM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from accelwiz.estimate.report import Target

if TYPE_CHECKING:
    from accelwiz.probe.model import MachineProfile


@dataclass(frozen=True)
class TargetChoice:
    """The target (None: nothing to judge against), the topology, and what to tell the user about it."""

    target: Target | None
    gpus_per_node: int
    nodes: int
    warnings: tuple[str, ...] = ()
    debug: tuple[str, ...] = field(default=())


def select_target(
    system: str | None, gpu_memory: str | None, gpus: int | None, nodes: int | None,
    profile: MachineProfile | None = None, loaded: MachineProfile | None = None,
) -> TargetChoice:
    """--gpu-memory, else --system (`loaded`: its profile, where the caller read it already), else `profile` (the
    plan's machine), else the local GPUs; explicit --gpus/--nodes win over the profile's."""
    from accelwiz.estimate.sizes import gib, parse_size

    debug: list[str] = []
    if system is not None:
        from accelwiz.probe.profiles import load_system

        profile = loaded if loaded is not None else load_system(system)
    elif gpu_memory is None and profile is None:
        profile = local_profile(debug)
    gpus_per_node = gpus or (profile.gpu_count if profile is not None and profile.gpu_count else 1)
    node_count = nodes or (profile.num_machines if profile is not None else 1)
    host = profile.host.memory_total_bytes if profile is not None else None
    if gpu_memory is not None:
        target = Target(parse_size(gpu_memory), f"--gpu-memory {gpu_memory}", host)
        return TargetChoice(target, gpus_per_node, node_count, debug=tuple(debug))
    if profile is not None and profile.gpu_capacity_bytes:
        name, capacity = profile.gpus[0].name, profile.gpu_capacity_bytes
        target = Target(capacity, f"{name} ({gib(capacity)} CUDA can allocate; nvidia-smi: "
                                  f"{gib(profile.min_gpu_memory_bytes)})", host, name)
        return TargetChoice(target, gpus_per_node, node_count, debug=tuple(debug))
    if profile is not None and host:  # no GPU: its processes train on the CPU, judged on its RAM (estimate/cpu.py)
        name = "this machine" if system == "local" else (profile.name or system or "the plan's machine")
        target = Target(0, f"{name} (no GPU; {gib(host)} RAM)", host, device="cpu")
        return TargetChoice(target, gpus or 1, node_count, debug=tuple(debug))
    warnings = (f"the system `{system}` has no GPU and records no RAM; no verdict is possible",) \
        if system is not None else ()
    return TargetChoice(None, gpus_per_node, node_count, warnings, tuple(debug))


def local_profile(debug: list[str]) -> MachineProfile | None:
    """This machine's GPUs, or None without a GPU (never an error); why not is appended to `debug`."""
    if not nvidia_driver_present():
        debug.append("no NVIDIA driver on this machine: no local GPU to judge against")
        return None
    try:
        from accelwiz.probe.profiles import load_system

        return load_system("local")
    except Exception as exc:  # noqa: BLE001 - a failed probe only means "no local target"
        debug.append(f"local probe failed: {exc}")
        return None


def nvidia_driver_present() -> bool:
    """A cheap look before the full probe (which imports pydantic and NVML): Linux driver, or WSL's GPU."""
    from pathlib import Path

    return (
        Path("/proc/driver/nvidia").exists() or Path("/dev/nvidiactl").exists() or Path("/dev/dxg").exists()
    )
