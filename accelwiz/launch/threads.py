"""Threads per training process on CPUs: the cores other work leaves free / processes-per-machine, on every
launch line accelwiz runs (the lines it prints or writes for other machines take `cores / processes` there).

Why: torch sizes its intra-op pool from OMP_NUM_THREADS, and `accelerate launch` sets that from
`--num_cpu_threads_per_process`; without the flag it guesses (the physical cores over the local processes, only
when the YAML says `use_cpu`, else 1) and warns in every run. Two jobs on two cores that each take every core run
their spinning OpenMP workers against each other: the quickstart's 30 steps went from 8,907 tokens/s alone to 289
beside a two-process neighbour (issue 33). A pool no larger than the process's share of the cores keeps it at a
fair share (docs/performance.md, "Threads per process on CPUs").

The count goes on the line twice: `--num_cpu_threads_per_process` (what accelerate exports to each worker) and
OMP_NUM_THREADS in front (the launcher's own process, and what a user copying the line sees).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError
from accelwiz.launch import shell

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.launch.preflight import Preflight

THREADS_FLAG = "--num_cpu_threads_per_process"
THREADS_ENV = "OMP_NUM_THREADS"
# on other machines the count is computed there, from the cores the node gives the job (nproc honours the
# cgroup and the affinity mask, as os.sched_getaffinity does here)


@dataclass(frozen=True)
class Threads:
    """Each process's threads: a number (a launch here), or a shell expansion evaluated on each node."""

    per_process: int | shell.Raw
    reason: str

    def word(self) -> str:
        """The count as one shell word (an expansion stays `Raw`)."""
        return self.per_process if isinstance(self.per_process, shell.Raw) else str(self.per_process)

    def launcher_flags(self) -> list[str]:
        return [THREADS_FLAG, self.word()]

    def shown(self) -> str:
        return f"{self.per_process} thread{'s' if self.per_process != 1 else ''} per process ({self.reason})"


def available_cores() -> int:
    """The cores this process may run on (the affinity mask and the cgroup's cpuset), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_cores(cores: int, interval: float = 0.2) -> int:
    """How many of the cores other work keeps busy right now: the machine's CPU use over `interval` seconds
    (this process sleeps meanwhile, so it is not counted), in whole cores."""
    import psutil

    return min(cores, round(psutil.cpu_percent(interval=interval) / 100 * cores))


def threads_here(processes_per_machine: int, *, given: int | None, environ: Mapping[str, str],
                 cores: int | None = None, busy: int = 0, warn: list[str] | None = None) -> Threads:
    """The threads of each process launched on this machine: `--threads-per-process`, else the user's own
    OMP_NUM_THREADS, else the cores other work leaves free (`busy`: cores in use when the run starts) over the
    processes, at least one. Zero is refused; more threads than cores across the processes is corrected to the
    fair share, with one line in `warn`.

    Why the free cores and not all of them: OpenMP pools wait for their slowest thread at every operation, so a
    pool whose threads share cores with a busy neighbour runs at the pace of its preempted threads. Measured on the
    quickstart beside a two-process neighbour on 2 cores: 2 threads 2,895 tokens/s (a twelfth of its 33,443
    alone), 1 thread 23,075 (docs/performance.md, "Threads per process on CPUs")."""
    cores = available_cores() if cores is None else cores
    free = max(1, cores - busy)
    fair = max(1, free // max(1, processes_per_machine))
    share = (f"{cores} core{'s' if cores != 1 else ''}" + (f", {busy} busy when launched" if busy else "")
             + f" / {processes_per_machine} process{'es' if processes_per_machine != 1 else ''}")
    if given is not None and given < 1:
        raise UsageError(f"--threads-per-process {given}: a process needs at least one thread",
                         hint=f"pass --threads-per-process {fair} ({share}), or leave it out")
    chosen, source = given, "--threads-per-process"
    if chosen is None and environ.get(THREADS_ENV, "").strip().isdigit() and int(environ[THREADS_ENV]) > 0:
        chosen, source = int(environ[THREADS_ENV]), f"{THREADS_ENV} in the environment"
    if chosen is None:
        return Threads(fair, share)
    if chosen * processes_per_machine > cores:
        if warn is not None:
            warn.append(f"{source} {chosen} x {processes_per_machine} process(es) = "
                        f"{chosen * processes_per_machine} threads on {cores} core(s) would oversubscribe them: "
                        f"using {fair} per process ({share})")
        return Threads(fair, share)
    return Threads(chosen, source)


def threads_on_nodes(processes_per_machine: int, given: int | None) -> Threads:
    """The threads of each process on other machines (node commands, sbatch): computed on each node from its
    own cores, at least one; `--threads-per-process` as given."""
    if given is not None:
        if given < 1:
            raise UsageError(f"--threads-per-process {given}: a process needs at least one thread",
                             hint="pass 1 or more, or leave it out (each node then takes its cores / processes)")
        return Threads(given, "--threads-per-process")
    n = max(1, processes_per_machine)
    expansion = shell.Raw(f'"$(( $(nproc) > {n} ? $(nproc) / {n} : 1 ))"')
    return Threads(expansion, f"each node's cores / {n} process{'es' if n != 1 else ''}")


def launch_threads(console: Console, checked: Preflight, *, here: bool, given: int | None) -> tuple[
    Threads | None, Threads
]:
    """(threads here, threads on the nodes): here when this launch trains on CPUs (no GPU here, or use_cpu);
    the nodes' are computed there and used where the nodes train on CPUs. None where GPUs train here."""
    per_machine = checked.spec.processes_per_machine
    on_nodes = threads_on_nodes(per_machine, given)
    system = checked.unit.system
    cpu_here = checked.spec.use_cpu or any(c.name == "ACCELERATE_USE_CPU" for c in checked.env) or (
        system is not None and system.gpu_count == 0)
    if not (here and cpu_here):
        return None, on_nodes
    warnings: list[str] = []
    measure = given is None and not os.environ.get(THREADS_ENV, "").strip()
    cores = available_cores()
    threads = threads_here(per_machine, given=given, environ=os.environ, cores=cores,
                           busy=busy_cores(cores) if measure else 0, warn=warnings)
    for line in warnings:
        console.warn(line)
    return threads, on_nodes
