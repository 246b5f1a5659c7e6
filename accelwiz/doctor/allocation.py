"""Where this node stands in the allocation: how many nodes, its rank, and node 0's address and port.

Read from flags first, then from the environment SLURM gives each srun task (SLURM_PROCID, SLURM_NTASKS,
SLURM_NODELIST, with one task per node), then from the torchrun / accelerate variables (NODE_RANK or RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, with one doctor process per node).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from accelwiz.errors import UsageError

# torch.distributed's and accelerate's default rendezvous port (accelerate launch passes `main_process_port`
# to torchrun, whose --master-port defaults to 29500: torch/distributed/run.py, get_args_parser).
DEFAULT_MAIN_PORT = 29500


@dataclass(frozen=True)
class Allocation:
    nodes: int
    rank: int
    main_address: str | None
    main_port: int
    store_port: int  # where node 0 hosts the preflight's own store: the main port stays free for training
    hosts: tuple[str, ...] = ()  # SLURM's node list, in rank order, when known
    main_from_nodelist: bool = False  # node 0's address is SLURM's name for it (no flag, no MASTER_ADDR)

    def host_of(self, rank: int) -> str | None:
        return self.hosts[rank] if rank < len(self.hosts) else None

    @property
    def main(self) -> str:
        return f"{self.main_address or '-'}:{self.main_port}"


def read_allocation(environ: Mapping[str, str], *, nodes: int | None = None, node_rank: int | None = None,
                    main_address: str | None = None, main_port: int | None = None, store_port: int | None = None,
                    expect_nodes: int | None = None) -> Allocation:
    """The allocation as flags and environment describe it; a UsageError (exit 2) when it is inconsistent."""
    hosts = tuple(expand_nodelist(environ.get("SLURM_NODELIST") or environ.get("SLURM_JOB_NODELIST") or ""))
    nodes = _first(nodes, _env_int(environ, "SLURM_NTASKS"), _env_int(environ, "WORLD_SIZE"), expect_nodes, 1)
    rank = _first(node_rank, _env_int(environ, "SLURM_PROCID"), _env_int(environ, "NODE_RANK"),
                  _env_int(environ, "RANK"), 0)
    address = main_address or environ.get("MASTER_ADDR") or (hosts[0] if hosts else None)
    port = _first(main_port, _env_int(environ, "MASTER_PORT"), DEFAULT_MAIN_PORT)
    store = _first(store_port, port + 1 if port < 65535 else port - 1)
    if nodes < 1:
        raise UsageError(f"the allocation has {nodes} nodes", hint="pass --nodes N with N >= 1")
    if not 0 <= rank < nodes:
        raise UsageError(f"node rank {rank} is outside 0..{nodes - 1}",
                         hint="pass --node-rank R and --nodes N (or run one srun task per node)")
    for name, value in (("--main-port", port), ("--store-port", store)):
        if not 1 <= value <= 65535:
            raise UsageError(f"{name} {value} is not a TCP port", hint="pass a port between 1 and 65535")
    if store == port:
        raise UsageError(f"--store-port {store} is the main port", hint="leave --store-port out (main port + 1)")
    if nodes > 1 and not address:
        raise UsageError(f"{nodes} nodes but no main address",
                         hint="pass --main-address (node 0's address), or set MASTER_ADDR")
    from_nodelist = not (main_address or environ.get("MASTER_ADDR")) and bool(hosts)
    return Allocation(nodes, rank, address, port, store, hosts, from_nodelist)


def slurm_node_address(name: str) -> str | None:
    """The address SLURM knows node `name` by (`scontrol show node NAME -o`: NodeAddr), as the sbatch script `run
    --slurm` writes looks up its head node: a node name need not resolve (NodeName vs NodeAddr in slurm.conf).
    None when scontrol is absent, fails or names no address."""
    import subprocess

    try:
        shown = subprocess.run(["scontrol", "show", "node", name, "-o"], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(?:^|\s)NodeAddr=(\S+)", shown.stdout) if shown.returncode == 0 else None
    return found[1] if found and found[1] != name else None


def _first(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _env_int(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not an integer", hint=f"unset {name} or pass the flag instead") \
            from None


def expand_nodelist(text: str) -> list[str]:
    """SLURM's compact host list in order: "gpu[01-03,07],login1" -> gpu01, gpu02, gpu03, gpu07, login1.

    The same expansion as `scontrol show hostnames` for one bracket group per name (what SLURM writes for
    SLURM_NODELIST); zero padding is kept from the range's first bound.
    """
    hosts: list[str] = []
    for name in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        match = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", name)
        if match is None:
            hosts.append(name)
            continue
        prefix, ranges, suffix = match.groups()
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            width = len(low)
            for number in range(int(low), int(high or low) + 1):
                hosts.append(f"{prefix}{number:0{width}d}{suffix}")
    return hosts
