"""Which GPUs a CUDA process will see, and in which order, given `CUDA_VISIBLE_DEVICES`.

CUDA's rules (CUDA C Programming Guide, "CUDA Environment Variables"): a comma-separated list of
device indices, `GPU-<uuid>` or `MIG-<uuid>` entries (a unique UUID prefix is enough); the listed order
becomes the CUDA order; an invalid entry hides itself *and every entry after it*; an empty value hides
every GPU. Indices are CUDA indices, which equal NVML's PCI-bus order when `CUDA_DEVICE_ORDER=PCI_BUS_ID` or
when all GPUs are the same model (the default FASTEST_FIRST order only reorders different models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PhysicalGpu:
    """One GPU as NVML lists it (PCI-bus order), with the UUIDs of its MIG instances."""

    nvml_index: int
    uuid: str | None = None
    mig_uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Selection:
    """A device visible to CUDA: a whole GPU, or one MIG instance of it."""

    nvml_index: int
    mig_uuid: str | None = None


def select_visible(devices: Sequence[PhysicalGpu], value: str | None) -> tuple[list[Selection], list[str]]:
    """The devices CUDA will enumerate, in CUDA order, and notes about entries it will ignore."""
    if value is None:
        return [Selection(d.nvml_index) for d in devices], []
    if not value.strip():
        return [], ["CUDA_VISIBLE_DEVICES is set to an empty value, so CUDA sees no GPU"]
    selected: list[Selection] = []
    for position, token in enumerate(t.strip() for t in value.split(",")):
        match = _resolve(devices, token)
        problem = ("does not name a GPU on this machine" if match is None
                   else "is listed twice" if match in selected else None)
        if problem:
            ignored = ",".join(t.strip() for t in value.split(",")[position:])
            return selected, [f"CUDA_VISIBLE_DEVICES entry `{token}` {problem}; CUDA ignores it and "
                              f"every entry after it (`{ignored}`)"]
        selected.append(match)  # type: ignore[arg-type]
    return selected, []


def _resolve(devices: Sequence[PhysicalGpu], token: str) -> Selection | None:
    if token.isascii() and token.isdigit():  # str.isdigit() also accepts '²' and full-width digits
        index = int(token)
        return Selection(devices[index].nvml_index) if index < len(devices) else None
    if token.startswith("GPU-"):
        found = [d for d in devices if d.uuid and d.uuid.startswith(token)]
        return Selection(found[0].nvml_index) if len(found) == 1 else None
    if token.startswith("MIG-"):
        found_mig = [(d, m) for d in devices for m in d.mig_uuids if m.startswith(token)]
        return Selection(found_mig[0][0].nvml_index, found_mig[0][1]) if len(found_mig) == 1 else None
    return None
