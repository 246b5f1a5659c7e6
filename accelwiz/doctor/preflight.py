"""The preflight, start to end on one node: gather, rendezvous, exchange, compare, all-reduce, one report.

Every wait is bounded: joining and the first exchange by the deadline (`timeout` seconds after the start), the
later exchanges (when every node is known to be alive) by a short grace each, the all-reduce by its own limit.
Every node computes its findings from the same exchanged data, so all nodes print the same rows.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.doctor import DEFAULT_TIMEOUT
from accelwiz.doctor.allocation import Allocation
from accelwiz.doctor.compare import differences, local_findings, plan_findings, sharing_findings
from accelwiz.doctor.exchange import (
    StoreUnreachable,
    import_torch_distributed,
    is_local_address,
    main_port_held,
    open_store,
    reach_main_port,
    resolve,
    Shared,
    share,
)
from accelwiz.doctor.gather import gather, remove_token, sees_token
from accelwiz.doctor.model import (
    Finding,
    NodeFacts,
    Problem,
    RankedResult,
    Report,
    Sighting,
    sorted_findings,
)
from accelwiz.doctor.wire import SECRET_ENV, BadRecord, Model, job_key, open_record, seal

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanSystem

PHASE_GRACE = 5.0  # seconds for an exchange once every node has joined: they are alive and in step
ALLREDUCE_SECONDS = 10.0


@dataclass(frozen=True)
class Options:
    output_dir: Path
    cache_dir: Path
    timeout: float = DEFAULT_TIMEOUT
    plan: PlanSystem | None = None
    plan_name: str = "the plan"
    expect_nodes: int | None = None
    allreduce: bool = True


@dataclass
class _Run:
    """One node's run: its allocation and options, and when it started."""

    alloc: Allocation
    options: Options
    say: Callable[[str], None]
    start: float
    key: bytes = b""  # the records' MAC key (wire.job_key)
    authenticated: bool = False  # the key is the job's secret, not one derived from the flags
    joined: tuple[int, ...] = ()  # the nodes that posted their facts: node 0 waits for these before leaving

    @property
    def deadline(self) -> float:
        return self.start + self.options.timeout

    def waited(self) -> float:
        return round(time.monotonic() - self.start, 1)

    def report(self, facts: list[NodeFacts], findings: list[Finding], **extra: Any) -> Report:
        return Report(this_node=self.alloc.rank, nodes=self.alloc.nodes, main=self.alloc.main,
                      waited_seconds=self.waited(), facts=facts, findings=sorted_findings(findings), **extra)


def run_preflight(alloc: Allocation, options: Options, *, environ: Mapping[str, str],
                  say: Callable[[str], None] = lambda _: None) -> Report:
    """This node's preflight; never raises for what it finds (that is the report), only for bugs."""
    if alloc.nodes > 1:
        # torch takes seconds to import, more on a loaded node: the clock starts once this node is ready to meet
        # the others, so that the timeout measures how late they are, not how slow this import was.
        import_torch_distributed()
    key, authenticated = job_key(environ, nodes=alloc.nodes, main=alloc.main, store_port=alloc.store_port)
    run = _Run(alloc, options, say, time.monotonic(), key, authenticated)
    hold = main_port_held(alloc.main_port) if alloc.rank == 0 else contextlib.nullcontext(None)
    with hold as port_error:
        facts = gather(alloc.rank, folders={"output": options.output_dir, "cache": options.cache_dir},
                       nonce=secrets.token_hex(6), environ=environ)
        facts = facts.model_copy(update={"main_port_error": port_error})
        try:
            if alloc.nodes == 1:
                return run.report([facts], [*local_findings(facts), *_planned(run, [facts])],
                                  notes=_notes([facts]))
            return _together(run, facts)
        finally:
            for folder in facts.folders:
                remove_token(folder)


def _together(run: _Run, facts: NodeFacts) -> Report:
    alloc = run.alloc = _slurm_address(run.alloc)
    # node 0 too: a name it cannot resolve is that, not "another program holds the port" (its store's bind)
    if (error := resolve(alloc.main_address)) is not None:
        return run.report([facts], [*local_findings(facts), Finding(
            problem=Problem.UNREACHABLE, node=0, host=alloc.main_address, check="main address",
            detail=f"node {alloc.rank} cannot resolve node 0's address {alloc.main_address}: {error}",
            hint="pass node 0's host name or IP as --main-address")])
    run.say(f"preflight: node {alloc.rank} of {alloc.nodes} ({facts.hostname}), meeting at "
            f"{alloc.main_address}:{alloc.store_port}, for up to {run.options.timeout:g} s")
    try:
        store = open_store(alloc.main_address, alloc.store_port, host=alloc.rank == 0, nodes=alloc.nodes,
                           deadline=run.deadline)
    except StoreUnreachable as exc:
        return run.report([facts], [*local_findings(facts), _store_failure(run, exc)])
    if alloc.rank != 0:
        error = reach_main_port(alloc.main_address, alloc.main_port, run.deadline - time.monotonic())
        facts = facts.model_copy(update={"main_port_reached": error is None, "main_port_reach_error": error})
    try:
        return _exchange(run, store, facts)
    finally:
        _finish(run, store)


def _slurm_address(alloc: Allocation) -> Allocation:
    """Node 0 named by SLURM's node list under a name that does not resolve: the address SLURM knows it by, as
    the sbatch script looks it up (every node asks the same scontrol, so all meet at the same address)."""
    if not alloc.main_from_nodelist or alloc.main_address is None or resolve(alloc.main_address) is None:
        return alloc
    from dataclasses import replace

    from accelwiz.doctor.allocation import slurm_node_address

    looked_up = slurm_node_address(alloc.main_address)
    return replace(alloc, main_address=looked_up) if looked_up else alloc


def _store_failure(run: _Run, exc: StoreUnreachable) -> Finding:
    alloc = run.alloc
    where = f"{alloc.main_address}:{alloc.store_port}"
    if alloc.rank == 0 or exc.held:
        detail = (f"node 0 cannot host the preflight at port {alloc.store_port}: {exc.reason}" if alloc.rank == 0
                  else f"node {alloc.rank} reached {where}, but {exc.reason}")
        return Finding(problem=Problem.PORT, node=0, host=alloc.host_of(0) or alloc.main_address,
                       check="preflight port", detail=detail,
                       hint="another program holds it on node 0: pass --store-port with a free port on every node")
    return Finding(problem=Problem.UNREACHABLE, node=0, host=alloc.host_of(0) or alloc.main_address,
                   check="rendezvous",
                   detail=f"node {alloc.rank} could not reach node 0 at {where} (waited {run.waited():.0f} s): "
                          f"{exc.reason}",
                   hint="is node 0 running `accelwiz doctor` too? Check the address, and that the port is open "
                        "between the nodes")


def _exchange(run: _Run, store: Any, facts: NodeFacts) -> Report:
    alloc = run.alloc
    joined, posts, untrusted = _collect(run, store, "facts", facts, run.deadline)
    run.joined = tuple(sorted(joined.posts))
    nodes = [posts[r] for r in sorted(posts)]
    findings = [*untrusted, *(f for node in nodes for f in local_findings(node))]
    if untrusted or joined.missing or joined.lost:
        return run.report(nodes, [*findings, *_absent(run, joined.missing, joined.lost)], notes=_trust(run))
    sighting = Sighting(rank=alloc.rank, seen={
        folder.role: [n.rank for n in nodes for theirs in n.folders if theirs.role == folder.role
                      and sees_token(folder.path, theirs.role, n.rank, theirs.nonce)]
        for folder in facts.folders if folder.writable})
    seen, sightings_by_rank, untrusted = _collect(run, store, "seen", sighting, _grace())
    sightings = [sightings_by_rank[r] for r in sorted(sightings_by_rank)]
    findings += [*untrusted, *sharing_findings(nodes, sightings), *differences(nodes), *_planned(run, nodes)]
    if seen.missing or seen.lost:
        return run.report(nodes, [*findings, *_absent(run, seen.missing, seen.lost)], notes=_trust(run))
    notes = [*_notes(nodes, sightings), *_trust(run)]
    if findings or not run.options.allreduce:
        notes.append("the all-reduce was skipped: fix the rows above first" if findings
                     else "the all-reduce was skipped (--no-allreduce)")
        return run.report(nodes, findings, notes=notes)
    return _allreduce(run, store, nodes, notes)


def _collect(run: _Run, store: Any, phase: str, mine: Model, deadline: float
             ) -> tuple[Shared, dict[int, Model], list[Finding]]:
    """Post this node's record under `phase`, sealed, and open every node's: the records that pass, and one
    UNTRUSTED row per rank whose record does not (wire.open_record: size, seal, UTF-8, JSON, schema, rank)."""
    alloc = run.alloc
    shared = share(store, phase, alloc.rank, seal(run.key, phase, alloc.rank, mine.model_dump_json()), alloc.nodes,
                   deadline)
    records: dict[int, Model] = {}
    untrusted = []
    for rank, raw in sorted(shared.posts.items()):
        try:
            records[rank] = open_record(run.key, phase, rank, raw, type(mine))
        except BadRecord as exc:
            untrusted.append(Finding(
                problem=Problem.UNTRUSTED, node=rank, host=alloc.host_of(rank), check=f"{phase} record",
                detail=f"the {phase} record posted as node {rank} at {alloc.main_address}:{alloc.store_port} was "
                       f"refused, unread: {exc.reason}",
                hint=f"run every node with the same {SECRET_ENV} (accelwiz run sets it); if they do, another "
                     "process reached the preflight's port: find it, or pass another --store-port"))
    return shared, records, untrusted


def _trust(run: _Run) -> list[str]:
    if run.authenticated or run.alloc.nodes == 1:
        return []
    return [f"peers were not authenticated: {SECRET_ENV} is not set (accelwiz run's job scripts set it; set one "
            "random value on every node to keep other processes out of the preflight)"]


def _allreduce(run: _Run, store: Any, nodes: list[NodeFacts], notes: list[str]) -> Report:
    from accelwiz.doctor.allreduce import run_allreduce

    alloc = run.alloc
    nccl = all(n.gpus.count > 0 and n.gpus.torch_cuda for n in nodes)
    run.say(f"preflight: all-reduce over {'NCCL' if nccl else 'gloo'} between {alloc.nodes} nodes")
    mine = run_allreduce(store, alloc.rank, alloc.nodes, nccl=nccl, timeout=ALLREDUCE_SECONDS)
    posted = RankedResult(rank=alloc.rank, result=mine)
    results, outcome, untrusted = _collect(run, store, "allreduce", posted, _grace())
    findings = [*untrusted, *(
        Finding(problem=Problem.ALLREDUCE, node=r, host=nodes[r].hostname, check=f"all-reduce ({o.result.backend})",
                detail=o.result.error, hint="rerun with NCCL_DEBUG=INFO (GPUs) or check GLOO_SOCKET_IFNAME; "
                                            "a firewall between the nodes also stops it")
        for r, o in outcome.items() if o.result.error)]
    findings += _absent(run, results.missing, results.lost)
    return run.report(nodes, findings, allreduce={r: o.result for r, o in outcome.items()}, notes=notes)


def _absent(run: _Run, missing: list[int], lost: str | None) -> list[Finding]:
    alloc = run.alloc
    where = f"{alloc.main_address}:{alloc.store_port}"
    if lost is not None and alloc.rank != 0:
        return [Finding(problem=Problem.UNREACHABLE, node=0, host=alloc.host_of(0) or alloc.main_address,
                        check="rendezvous", detail=f"node 0 at {where} stopped answering after {run.waited():.0f} s: "
                                                   f"{lost}",
                        hint="node 0 exited or crashed: see its log")]
    elsewhere = ""
    if missing and alloc.rank == 0 and is_local_address(alloc.main_address) is False:
        elsewhere = f", and {alloc.main_address} is not an address of node 0: the others look for it elsewhere"
    return [Finding(problem=Problem.UNREACHABLE, node=r, host=alloc.host_of(r), check="rendezvous",
                    detail=f"node {r}{f' ({alloc.host_of(r)})' if alloc.host_of(r) else ''} did not join the "
                           f"preflight at {where}; waited {run.waited():.0f} s{elsewhere}",
                    hint="see that node's log: it exited, never started, or cannot reach node 0 (one "
                         "`accelwiz doctor` per node)")
            for r in missing]


def _finish(run: _Run, store: Any) -> None:
    """Node 0 hosts the store: it stays up until every node that joined has read what it needs (or a grace has
    passed); a node that never joined is not waited for twice."""
    with contextlib.suppress(RuntimeError, OSError):
        store.set(f"done/{run.alloc.rank}", "1")
        if run.alloc.rank == 0:
            end = _grace()
            while time.monotonic() < end and not store.check([f"done/{r}" for r in run.joined]):
                time.sleep(0.05)


def _planned(run: _Run, nodes: list[NodeFacts]) -> list[Finding]:
    options = run.options
    return plan_findings(nodes, run.alloc.nodes, options.plan, options.plan_name, options.expect_nodes)


def _notes(nodes: list[NodeFacts], sightings: list[Sighting] = ()) -> list[str]:
    gpu_notes = {n.gpus.note for n in nodes if n.gpus.note}
    if len(gpu_notes) == 1 and all(n.gpus.note for n in nodes):
        notes = [f"{'every node' if len(nodes) > 1 else 'this node'}: {gpu_notes.pop()}"]
    else:
        notes = [f"node {n.rank}: {n.gpus.note}" for n in nodes if n.gpus.note]
    writers = {n.rank for n in nodes for f in n.folders if f.role == "cache" and f.writable}
    unshared = [s.rank for s in sightings if "cache" in s.seen and not writers <= set(s.seen["cache"])]
    if unshared and len(nodes) > 1:
        notes.append(f"the cache folder is not shared with node(s) {', '.join(map(str, unshared))}: each node "
                     "downloads its own copy of the model")
    return notes


def _grace() -> float:
    return time.monotonic() + PHASE_GRACE
