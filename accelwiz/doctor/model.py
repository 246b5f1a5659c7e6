"""What the preflight exchanges and reports: per-node facts, the problems found, and the report.

Exit codes: one per kind of problem, so a job log or a CI step tells at a glance what to fix. When several kinds
are found, the exit code is that of the first row of the table; rows are sorted in `Problem`'s order (a node that
never joined makes the rest moot; mismatched versions matter only once the nodes can talk).
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Problem(str, Enum):
    """A kind of problem, in the order rows are shown; `exit_code` is what every node exits with."""

    UNTRUSTED = "untrusted peer"
    UNREACHABLE = "unreachable"
    PORT = "main port"
    INTERFACE = "interface"
    STORAGE = "storage"
    MISMATCH = "mismatch"
    ALLREDUCE = "all-reduce"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self]


EXIT_CODES: dict[Problem, int] = {
    Problem.MISMATCH: 3,  # nodes differ from each other or from the plan (versions, GPUs, Python, node count)
    Problem.UNREACHABLE: 4,  # a node did not join, could not reach node 0, or stopped answering
    Problem.PORT: 5,  # the main port is in use on node 0, or cannot be reached from another node
    Problem.INTERFACE: 6,  # NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME names no usable interface on a node
    Problem.STORAGE: 7,  # the output or cache folder is not writable, or the output folder is not shared
    Problem.ALLREDUCE: 8,  # the test all-reduce failed, gave a wrong sum, or did not finish in time
    # a record on node 0's store is not a sealed record of this job (another secret, a forgery, bad JSON,
    # not UTF-8, too large, not the schema): first, since nothing else that peer says can be believed
    Problem.UNTRUSTED: 9,
}


class GpuFacts(_Frozen):
    count: int = 0
    models: list[str] = Field(default_factory=list, description="Distinct GPU names on the node.")
    memory_bytes: int | None = Field(None, description="The smallest GPU's total memory.")
    driver: str | None = None
    cuda: str | None = Field(None, description="The CUDA version the driver supports.")
    torch_cuda: bool | None = Field(None, description="Whether the installed torch is a CUDA build.")
    note: str | None = None


class InterfaceCheck(_Frozen):
    variable: str
    value: str
    usable: list[str] = Field(description="Interfaces with an IP address that the value selects.")
    missing: list[str] = Field(description="Names or prefixes in the value that select no usable interface.")
    ok: bool


class FolderCheck(_Frozen):
    role: Literal["output", "cache"]
    path: str = Field(description="The folder as this node resolved it.")
    writable: bool
    error: str | None = None
    token: str | None = Field(None, max_length=200,
                              description="The file this node wrote there; the others look for the name they "
                                          "derive from the nonce, never for this string (wire.py).")
    nonce: str | None = Field(None, pattern=r"^[0-9a-f]{12}$")


class NodeFacts(_Frozen):
    rank: int
    hostname: str
    python: str
    packages: dict[str, str | None]
    gpus: GpuFacts
    network_env: dict[str, str] = Field(description="NCCL_* and GLOO_* variables set on the node.")
    usable_interfaces: list[str] = Field(default_factory=list, description="Interfaces with an IP address.")
    interfaces: list[InterfaceCheck] = Field(default_factory=list, description="The *_SOCKET_IFNAME checks.")
    folders: list[FolderCheck] = Field(default_factory=list)
    main_port_error: str | None = Field(None, description="Node 0: why the main port could not be bound.")
    main_port_reached: bool | None = Field(None, description="Other nodes: whether a TCP connection to the main "
                                                              "address and port succeeded.")
    main_port_reach_error: str | None = None


class Sighting(_Frozen):
    """Which other nodes' token files a node sees in its own output and cache folders."""

    rank: int
    seen: dict[str, list[int]] = Field(description="Folder role -> ranks whose token this node sees.")


class AllReduceResult(_Frozen):
    backend: str
    size_bytes: int = 0
    iterations: int = 0
    seconds: float | None = None
    bus_bandwidth_gbps: float | None = Field(None, description="nccl-tests' bus bandwidth: 2(n-1)/n x bytes / s, "
                                                               "in GB/s (10^9).")
    error: str | None = None


class RankedResult(_Frozen):
    """A node's all-reduce result as posted, with its rank (the wire checks it is the rank it was posted as)."""

    rank: int
    result: AllReduceResult


class Finding(_Frozen):
    problem: Problem
    node: int | None = Field(None, description="The node the row is about; None for the allocation as a whole.")
    host: str | None = None
    check: str
    detail: str
    hint: str


class Report(_Frozen):
    title: str = "accelwiz preflight"
    this_node: int
    nodes: int
    main: str = Field(description="main address:main port")
    waited_seconds: float
    facts: list[NodeFacts]
    findings: list[Finding]
    allreduce: dict[int, AllReduceResult] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @computed_field  # in the JSON too, for CI
    @property
    def exit_code(self) -> int:
        return exit_code(self.findings)


def exit_code(findings: list[Finding]) -> int:
    """0 when nothing was found, else the code of the most fundamental problem (Problem's order)."""
    order = list(Problem)
    return min((f.problem for f in findings), key=order.index).exit_code if findings else 0


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    order = list(Problem)
    return sorted(findings, key=lambda f: (order.index(f.problem), -1 if f.node is None else f.node))
