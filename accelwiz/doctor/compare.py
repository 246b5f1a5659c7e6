"""From the nodes' facts to findings: what each node found wrong with itself, where nodes differ from each other,
and where they differ from the plan. Pure functions of the exchanged data, so every node finds the same rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from accelwiz.doctor.model import Finding, NodeFacts, Problem, Sighting

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanSystem

SAME_VERSIONS = "install the same versions on every node (one shared environment, or the same image)"
SAME_HARDWARE = "give every node the same GPUs and driver (SLURM: --constraint, or a homogeneous partition)"


def local_findings(node: NodeFacts) -> list[Finding]:
    """What a node found about itself: interfaces, writable folders, the main port."""
    found = []
    for check in node.interfaces:
        if not check.ok:
            found.append(Finding(
                problem=Problem.INTERFACE, node=node.rank, host=node.hostname, check=check.variable,
                detail=f"{check.variable}={check.value}: no usable interface {', '.join(check.missing)} on this "
                       f"node (it has {', '.join(node.usable_interfaces) or 'none with an IP address'})",
                hint=f"set {check.variable} to an interface every node has, or unset it"))
    for folder in node.folders:
        if not folder.writable:
            found.append(Finding(
                problem=Problem.STORAGE, node=node.rank, host=node.hostname, check=f"{folder.role} folder",
                detail=f"{folder.path} is not writable: {folder.error}",
                hint=f"point the {folder.role} folder at a writable, shared path"))
    if node.main_port_error is not None:
        found.append(Finding(problem=Problem.PORT, node=node.rank, host=node.hostname, check="main port",
                             detail=f"cannot listen on the main port: {node.main_port_error}",
                             hint="another process holds it: pick another --main-port (main_process_port)"))
    if node.main_port_reached is False:
        found.append(Finding(problem=Problem.PORT, node=node.rank, host=node.hostname, check="main port",
                             detail=f"cannot connect to node 0's main port: {node.main_port_reach_error}",
                             hint="open the port between the nodes (firewall), or pick another --main-port"))
    return found


def sharing_findings(nodes: list[NodeFacts], sightings: list[Sighting]) -> list[Finding]:
    """The output folder must be one folder for all nodes (checkpoints, the final model); a node that does not
    see the others' token files writes elsewhere. An unshared cache only costs downloads: not a finding."""
    writers = {n.rank for n in nodes for f in n.folders if f.role == "output" and f.writable}
    found = []
    for sighting in sightings:
        node = next(n for n in nodes if n.rank == sighting.rank)
        output = next((f for f in node.folders if f.role == "output"), None)
        if output is None or not output.writable:
            continue
        unseen = sorted(writers - set(sighting.seen.get("output", [])) - {sighting.rank})
        if unseen:
            found.append(Finding(
                problem=Problem.STORAGE, node=node.rank, host=node.hostname, check="output folder",
                detail=f"{output.path} is not shared: node {node.rank} does not see the files "
                       f"{_nodes(unseen)} wrote there",
                hint="use a folder on a shared filesystem (the same path on every node)"))
    return found


# What must be equal on every node: a reader of the value, and what to do when it is not.
FIELDS: dict[str, tuple[Callable[[NodeFacts], str], str]] = {
    "GPUs": (lambda n: str(n.gpus.count), SAME_HARDWARE),
    "GPU model": (lambda n: ", ".join(n.gpus.models) or "none", SAME_HARDWARE),
    "GPU memory": (lambda n: "-" if n.gpus.memory_bytes is None else f"{n.gpus.memory_bytes / 2**30:.1f} GiB",
                   SAME_HARDWARE),
    "driver": (lambda n: n.gpus.driver or "none", SAME_HARDWARE),
    "CUDA (driver)": (lambda n: n.gpus.cuda or "none", SAME_HARDWARE),
    "Python": (lambda n: n.python, SAME_VERSIONS),
}


def differences(nodes: list[NodeFacts]) -> list[Finding]:
    """One row per node whose value differs from most nodes' (from node 0's on a tie)."""
    fields = dict(FIELDS)
    for package in sorted({p for n in nodes for p in n.packages}):
        fields[package] = (lambda n, p=package: n.packages.get(p) or "not installed"), SAME_VERSIONS
    found = []
    for check, (read, hint) in fields.items():
        values = {n.rank: read(n) for n in nodes}
        if len(set(values.values())) < 2:
            continue
        counts = Counter(values.values())
        reference = max(counts, key=lambda v: (counts[v], -min(r for r, x in values.items() if x == v)))
        holders = [r for r, v in values.items() if v == reference]
        for node in nodes:
            if values[node.rank] != reference:
                found.append(Finding(
                    problem=Problem.MISMATCH, node=node.rank, host=node.hostname, check=check,
                    detail=f"{values[node.rank]} here; {_nodes(holders)} {'has' if len(holders) == 1 else 'have'} "
                           f"{reference}", hint=hint))
    return found


def plan_findings(nodes: list[NodeFacts], total: int, plan: PlanSystem | None, plan_name: str,
                  expect_nodes: int | None) -> list[Finding]:
    """The allocation against what was planned: the node count, and each node's GPUs."""
    found = []
    for expected, source in ((expect_nodes, "--expect-nodes"), (plan.machines if plan else None, plan_name)):
        if expected is not None and expected != total:
            found.append(Finding(problem=Problem.MISMATCH, check="nodes",
                                 detail=f"{total} node{'s' if total != 1 else ''} in the allocation; {source} expects "
                                        f"{expected}",
                                 hint="request as many nodes as planned (sbatch --nodes), or re-plan"))
    if plan is None:
        return found
    for node in nodes:
        if node.gpus.count != plan.gpus_per_machine:
            found.append(Finding(problem=Problem.MISMATCH, node=node.rank, host=node.hostname, check="GPUs",
                                 detail=f"{node.gpus.count} GPUs here; {plan_name} plans {plan.gpus_per_machine} "
                                        "per machine",
                                 hint="request the planned GPUs per node (--gpus-per-node), or re-plan"))
        elif plan.gpu and node.gpus.models and not all(_same_gpu(m, plan.gpu) for m in node.gpus.models):
            found.append(Finding(problem=Problem.MISMATCH, node=node.rank, host=node.hostname, check="GPU model",
                                 detail=f"{', '.join(node.gpus.models)} here; {plan_name} plans {plan.gpu}",
                                 hint="run on the planned GPU model, or re-plan (the memory estimate assumed it)"))
    return found


def _same_gpu(name: str, planned: str) -> bool:
    from accelwiz.probe.gpus import match_gpu_name

    have, want = match_gpu_name(name), match_gpu_name(planned)
    return have == want if have and want else name.strip().lower() == planned.strip().lower()


def _nodes(ranks: list[int]) -> str:
    return ("node " if len(ranks) == 1 else "nodes ") + ", ".join(str(r) for r in ranks)
