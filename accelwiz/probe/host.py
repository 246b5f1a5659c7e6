"""Probe the host: CPU, RAM, swap, NUMA nodes, and the disk where NVMe offload files would go.

Everything is read from psutil, /proc and /sys; `root` is a parameter so tests can point the /proc and /sys
readers at a fake tree. Any fact that cannot be read is None, never an exception.
"""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from accelwiz.probe.model import DiskInfo, HostInfo, MachineProfile

ROOT = Path("/")


def probe_host(disk_path: str | os.PathLike[str] | None = ".", *, root: Path = ROOT) -> HostInfo:
    """This machine's CPU, memory and (when `disk_path` is given) the disk holding that path."""
    import psutil

    memory = psutil.virtual_memory()
    return HostInfo(
        hostname=socket.gethostname() or None,
        cpu_model=cpu_model(root),
        cpu_physical_cores=psutil.cpu_count(logical=False),
        cpu_logical_cores=psutil.cpu_count(logical=True),
        memory_total_bytes=int(memory.total),
        memory_available_bytes=int(memory.available),
        swap_total_bytes=int(psutil.swap_memory().total),
        numa_nodes=numa_nodes(root),
        disk=disk_info(disk_path, root=root) if disk_path is not None else None,
    )


def cpu_model(root: Path = ROOT) -> str | None:
    """The first `model name` in /proc/cpuinfo (x86), or `Model`/`Hardware` on ARM boards."""
    text = _read(root / "proc/cpuinfo")
    for key in ("model name", "Model", "Hardware"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    return None


def numa_nodes(root: Path = ROOT) -> int | None:
    nodes = root / "sys/devices/system/node"
    if not nodes.is_dir():
        return None
    count = sum(1 for entry in nodes.iterdir() if entry.name.startswith("node") and entry.name[4:].isdigit())
    return count or None


def disk_info(path: str | os.PathLike[str], *, root: Path = ROOT) -> DiskInfo | None:
    """Free space at `path` (or at its nearest existing parent) and whether it lives on an NVMe device."""
    existing = nearest_existing(Path(path))
    if existing is None:
        return None
    usage = shutil.disk_usage(existing)
    device = block_device(existing, root=root)
    return DiskInfo(path=os.path.abspath(os.path.expanduser(path)), total_bytes=usage.total,
                    free_bytes=usage.free, device=device,
                    is_nvme=is_nvme(device, root=root) if device else None)


@dataclass(frozen=True)
class PathFacts:
    """What a rule can know about a path a config names (None = cannot be known from here)."""

    exists: bool | None
    is_nvme: bool | None
    free_bytes: int | None
    nearest: str | None = None  # the closest existing parent, when the path itself is missing


def path_facts(path: str, profile: MachineProfile) -> PathFacts | None:
    """Everything about `path` on a probed machine (this one); the saved disk's facts for a profile file
    when `path` is on that disk; None for a preset."""
    if profile.source == "probe":
        disk = disk_info(path)
        exists = _exists(Path(os.path.expanduser(path)))
        nearest = nearest_existing(Path(path)) if exists is False else None
        return PathFacts(exists, disk.is_nvme if disk else None, disk.free_bytes if disk else None,
                         str(nearest) if nearest else None)
    disk = profile.host.disk
    if disk is not None and (path == disk.path or path.startswith(disk.path.rstrip("/") + "/")):
        return PathFacts(None, disk.is_nvme, disk.free_bytes)
    return None


def nearest_existing(path: Path) -> Path | None:
    """`path` itself or the closest parent that exists: DeepSpeed creates the offload folder, on that disk."""
    current = Path(os.path.abspath(os.path.expanduser(path)))
    for candidate in (current, *current.parents):
        if _exists(candidate):
            return candidate
    return None


def _exists(path: Path) -> bool | None:
    """Whether `path` exists; None when stat fails for another reason than absence.

    `Path.exists` raises for EACCES (a parent this user cannot search) and ENAMETOOLONG: facts about a path a
    config names must never crash a check.
    """
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return None
    return True


def block_device(path: Path, *, root: Path = ROOT) -> str | None:
    """The kernel name (`nvme0n1p2`, `sda1`, `dm-0`) of the block device mounted at `path`'s mount point."""
    source = mount_source(path, root=root)
    if source is not None and source.startswith("/dev/"):
        device = root / source.lstrip("/")
        # /dev/disk/by-uuid/… and /dev/mapper/… are symlinks to the kernel's name.
        name = (device.resolve() if device.is_symlink() else device).name
        if (root / "sys/class/block" / name).exists():
            return name
    # `/dev/root` and friends: ask sysfs which device has the path's major:minor number instead.
    # Overlay, tmpfs and network file systems have no block device and end here as None.
    try:
        number = os.stat(path).st_dev
    except OSError:
        return None
    by_number = root / f"sys/dev/block/{os.major(number)}:{os.minor(number)}"
    return by_number.resolve().name if by_number.exists() else None


def mount_source(path: Path, *, root: Path = ROOT) -> str | None:
    """What /proc/mounts says is mounted at the longest mount point containing `path`."""
    target = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for line in _read(root / "proc/mounts").splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        mount_point = fields[1].replace("\\040", " ")
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), fields[0])
    return best[1] if best else None


def is_nvme(device: str, *, root: Path = ROOT) -> bool | None:
    """True for an NVMe disk or partition; None for device-mapper and md arrays (their members may differ)."""
    sys_entry = root / "sys/class/block" / device
    if (sys_entry / "partition").exists():
        device = sys_entry.resolve().parent.name  # a partition's sysfs folder sits inside its disk's folder
    if device.startswith(("dm-", "md")):
        return None
    return device.startswith("nvme")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
