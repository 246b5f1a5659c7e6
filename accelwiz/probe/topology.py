"""Summarise a GPU-to-GPU peer-to-peer matrix into one phrase a person can plan with.

The matrix cells use the vocabulary of `Topology.p2p`: "NVLink", "OK" (peer-to-peer over PCIe), "no",
"?" (could not be read) and "X" (the diagonal).
"""

from __future__ import annotations

from collections.abc import Sequence

from accelwiz.probe.model import Topology

NVLINK, PCIE_OK, NO_P2P, UNKNOWN, SELF = "NVLink", "OK", "no", "?", "X"


def summarize(p2p: Sequence[Sequence[str]]) -> str:
    """One of the `Topology.summary` phrases for a square P2P matrix."""
    count = len(p2p)
    if count == 0:
        return "none"
    if count == 1:
        return "single GPU"
    peers = [[j for j in range(count) if j != i and p2p[i][j] == NVLINK] for i in range(count)]
    off_diagonal = [p2p[i][j] for i in range(count) for j in range(count) if i != j]
    if all(len(linked) == count - 1 for linked in peers):
        return "NVLink all-to-all"
    if any(peers):
        # "pairs": every GPU is bridged to exactly one partner (two-slot NVLink bridges on PCIe boards).
        paired = all(len(linked) == 1 and peers[linked[0]] == [i] for i, linked in enumerate(peers))
        return "NVLink pairs" if paired else "NVLink partial"
    if all(cell == UNKNOWN for cell in off_diagonal):
        return "unknown"
    return "PCIe only"


def topology_from_matrix(p2p: Sequence[Sequence[str]]) -> Topology:
    return Topology(summary=summarize(p2p), p2p=[list(row) for row in p2p])  # type: ignore[arg-type]


def uniform_matrix(count: int, cell: str) -> list[list[str]]:
    """Every pair linked the same way (what a preset with an NVSwitch or a plain PCIe server looks like)."""
    return [[SELF if i == j else cell for j in range(count)] for i in range(count)]


def linked_matrix(count: int, links: dict[int, set[int]], *, other: str = NO_P2P) -> list[list[str]]:
    """NVLink between the listed pairs, `other` elsewhere (a hybrid cube-mesh such as DGX-1 / p3dn)."""
    return [[SELF if i == j else NVLINK if j in links.get(i, set()) else other for j in range(count)]
            for i in range(count)]
