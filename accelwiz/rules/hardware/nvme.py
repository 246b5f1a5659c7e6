"""AW609-AW611: NVMe offload paths that do not exist, are not on NVMe, or lack space."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.rule import Needs, rule
from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.probe.host import PathFacts


# Without --model the space an offload needs is unknown; below this much free space any NVMe offload of a
# model large enough to need one (billions of parameters, tens of GB of states) runs out.
NVME_MIN_FREE_BYTES = 10 * GIB
NVME_BYTES_PER_PARAMETER = {"optimizer": 12, "param": 2}  # fp32 master + Adam m and v; 16-bit weights


@dataclass(frozen=True)
class _NvmePath:
    path: str
    kind: str  # "optimizer" or "param"
    role: Role
    key: KeyPath


def _nvme_paths(ctx: CheckContext) -> Iterator[_NvmePath]:
    """Every NVMe offload path the files set for a device that is actually `nvme`."""
    effective = ctx.effective
    for kind in ("optimizer", "param"):
        device, path = getattr(effective, f"offload_{kind}"), getattr(effective, f"offload_{kind}_nvme_path")
        # the device as the launcher reads it (an Accelerate YAML's NVME is nvme), the path from the same file
        if device.value == "nvme" and path.value is not None and path.role == device.role:
            yield _NvmePath(path.value, kind, path.role, path.path)


def _disk_facts(ctx: CheckContext, path: str) -> PathFacts | None:
    from accelwiz.probe.host import path_facts

    return path_facts(path, ctx.system) if ctx.system is not None else None


def _bytes_needed(ctx: CheckContext, kind: str) -> int | None:
    """Bytes one node writes for this offload, when --model gave a workload."""
    workload = ctx.workload
    count = getattr(workload, "trainable_parameters" if kind == "optimizer" else "model", None)
    if kind == "param":
        count = getattr(count, "num_parameters", None)
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    machines = max(ctx.system.num_machines if ctx.system else 1, 1)
    return count * NVME_BYTES_PER_PARAMETER[kind] // machines


@rule("AW609", "missing-nvme-offload-path", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Create the folder on the NVMe drive, or correct the path")
def missing_nvme_offload_path(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks, on the probed machine (`--system local`), that each NVMe offload `nvme_path` exists.

    ## Why is this bad?
    DeepSpeed creates the missing folders with `os.makedirs`, so a typo does not fail: the swap files land
    wherever the nearest existing parent lives, often the root disk, which is slow and may fill up. If that
    parent is not writable, the run fails at the first swap, after the model has been loaded.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvmee"}}}
    ```
    ```console
    accelwiz check --system local ds_config.json
    ```
    Use instead: the mount point of the NVMe drive, e.g. `/local_nvme`.
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is not None and facts.exists is False:
            where = f"; DeepSpeed would create it under {facts.nearest}" if facts.nearest else ""
            yield Finding(target.role, target.key, f"NVMe offload path `{target.path}` does not exist{where}")


@rule("AW610", "nvme-offload-off-nvme", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Point `nvme_path` at a local NVMe drive, or offload to `cpu` instead")
def nvme_offload_off_nvme(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an NVMe offload `nvme_path` that sits on a disk that is not NVMe (a SATA SSD, a disk, a network
    volume), for a probed machine or a saved profile whose disk is that path's disk.

    ## Why is this bad?
    ZeRO-Infinity swaps optimizer states or parameters through the disk at every step; its throughput assumes
    several GB/s of NVMe bandwidth. On other disks each step waits for I/O, often several times slower than
    offloading to CPU memory.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/home/me/offload"}}}
    ```
    ```console
    accelwiz check --system 1x4090.json ds_config.json
    ```
    with /home on a SATA disk (`1x4090.json`: the profile `accelwiz probe --save` wrote).
    Use instead: `"nvme_path": "/local_nvme"`.
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}
    ```
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is not None and facts.is_nvme is False:
            yield Finding(target.role, target.key,
                          f"NVMe offload path `{target.path}` is not on an NVMe device")


@rule("AW611", "nvme-offload-low-space", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Free space on the drive, or choose a larger NVMe drive")
def nvme_offload_low_space(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the free space at each NVMe offload path with what the offload writes: with `--model`, 12
    bytes per trainable parameter for the optimizer (fp32 weights and two Adam moments) and 2 bytes per
    parameter for the weights, per node; without it, a 10 GiB floor.

    ## Why is this bad?
    The swap files are written as training starts; a full disk fails the run with an I/O error after the model
    has been loaded, or fills the disk other jobs share.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/home/me/offload"}}}
    ```
    ```console
    accelwiz check --system 1x4090.json --model llama-2-7b ds_config.json
    ```
    with 4 GiB free on that disk for a 7B model (84 GB of optimizer state).
    Use instead: a drive with room for the states.
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is None or facts.free_bytes is None:
            continue
        needed = _bytes_needed(ctx, target.kind)
        floor = needed if needed is not None else NVME_MIN_FREE_BYTES
        if facts.free_bytes < floor:
            what = f"the {target.kind} offload writes about {floor / GIB:.1f} GiB" if needed is not None \
                else f"under the {floor / GIB:.0f} GiB any offload of a model that needs one writes"
            yield Finding(target.role, target.key, f"NVMe offload path `{target.path}` has "
                                                   f"{facts.free_bytes / GIB:.1f} GiB free, {what}")
