"""Host probe: the real one on this machine, and /proc + /sys parsing on fake trees."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from accelwiz.probe.host import (
    block_device,
    cpu_model,
    disk_info,
    is_nvme,
    mount_source,
    numa_nodes,
    probe_host,
)


def test_real_host_probe_matches_psutil(tmp_path):
    host = probe_host(tmp_path)
    assert host.cpu_logical_cores == psutil.cpu_count()
    assert host.memory_total_bytes == psutil.virtual_memory().total
    assert host.disk is not None and host.disk.path == str(tmp_path)
    assert 0 < host.disk.free_bytes <= host.disk.total_bytes
    assert host.disk.is_nvme in (True, False, None)


def test_a_missing_disk_path_reports_its_nearest_existing_parent(tmp_path):
    info = disk_info(tmp_path / "not" / "yet")
    assert info is not None and info.path == str(tmp_path / "not" / "yet")
    assert info.free_bytes > 0


def make_tree(root: Path, mounts: str, blocks: dict[str, str | None]) -> Path:
    """A fake / with proc/mounts and sys/class/block entries; `blocks` maps a name to its parent disk."""
    (root / "proc").mkdir(parents=True)
    (root / "proc/mounts").write_text(mounts)
    (root / "dev/mapper").mkdir(parents=True)
    devices = root / "sys/devices/pci0000:00"
    for name, parent in blocks.items():
        folder = devices / parent / name if parent else devices / name
        folder.mkdir(parents=True, exist_ok=True)
        if parent:
            (folder / "partition").write_text("1\n")
        (root / "sys/class/block").mkdir(parents=True, exist_ok=True)
        (root / "sys/class/block" / name).symlink_to(folder)
        (root / "dev" / name).touch()
    return root


MOUNTS = """\
/dev/nvme0n1p2 / ext4 rw 0 0
/dev/sda1 /data ext4 rw 0 0
/dev/mapper/vg-scratch /scratch xfs rw 0 0
/dev/md0 /raid ext4 rw 0 0
overlay /overlay overlay rw 0 0
/dev/nvme1n1 /local\\040nvme xfs rw 0 0
"""


@pytest.fixture()
def fake_root(tmp_path):
    root = make_tree(tmp_path, MOUNTS, {"nvme0n1": None, "nvme0n1p2": "nvme0n1", "sda": None, "sda1": "sda",
                                        "dm-0": None, "md0": None, "nvme1n1": None})
    (root / "dev/mapper/vg-scratch").symlink_to(root / "dev/dm-0")
    return root


@pytest.mark.parametrize("path,source,device,nvme", [
    ("/home/me", "/dev/nvme0n1p2", "nvme0n1p2", True),  # a partition of an NVMe disk
    ("/data/x", "/dev/sda1", "sda1", False),
    ("/scratch/run", "/dev/mapper/vg-scratch", "dm-0", None),  # device-mapper: members unknown
    ("/raid", "/dev/md0", "md0", None),
    ("/local nvme/offload", "/dev/nvme1n1", "nvme1n1", True),  # escaped space in /proc/mounts
])
def test_mount_resolution(fake_root, path, source, device, nvme):
    assert mount_source(Path(path), root=fake_root) == source
    assert block_device(Path(path), root=fake_root) == device
    assert is_nvme(device, root=fake_root) is nvme


def test_overlay_has_no_block_device(fake_root):
    assert mount_source(Path("/overlay/x"), root=fake_root) == "overlay"
    assert block_device(Path("/overlay/x"), root=fake_root) is None


def test_cpu_model_and_numa_nodes_from_fake_files(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                           "model name\t: AMD EPYC 7R13 Processor\n")
    for node in ("node0", "node1", "possible", "has_cpu"):
        (tmp_path / "sys/devices/system/node" / node).mkdir(parents=True)
    assert cpu_model(tmp_path) == "AMD EPYC 7R13 Processor"
    assert numa_nodes(tmp_path) == 2


def test_missing_proc_and_sys_give_none(tmp_path):
    assert cpu_model(tmp_path) is None
    assert numa_nodes(tmp_path) is None
    assert mount_source(Path("/x"), root=tmp_path) is None


@pytest.mark.skipif(not Path("/proc/mounts").exists(), reason="Linux only")
def test_this_machine_resolves_its_root_device():
    device = block_device(Path(os.getcwd()))
    assert device is None or (Path("/sys/class/block") / device).exists()


def test_a_path_that_cannot_be_stat_ed_is_unknown_not_a_crash(tmp_path):
    """ENAMETOOLONG (or EACCES under a folder this user cannot search) is not ENOENT: Path.exists raises."""
    from accelwiz.probe.host import nearest_existing, path_facts
    from accelwiz.probe.profiles import load_system

    unreachable = str(tmp_path / ("a" * 300) / "offload")
    assert nearest_existing(Path(unreachable)) == tmp_path
    facts = path_facts(unreachable, load_system("local"))
    assert facts is not None and facts.exists is None and facts.free_bytes is not None
