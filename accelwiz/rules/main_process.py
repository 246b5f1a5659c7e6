"""AW103-AW105: how the machines of a multi-node run find each other (machine_rank, main_process_ip/port).

`accelerate launch` 1.15 passes them to torchrun's static rendezvous (or DeepSpeed's launcher): every machine
needs the same main process address and a rank below num_machines.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from accelwiz.effective import NOT_WRITTEN
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.topology_view import machine_count, topology_view
from accelwiz.vocab import SIMPLE_LAUNCHER_TYPES

PLACEHOLDER_HOSTS = frozenset({"example", "hostname", "host", "ip", "your_ip", "main_ip", "master_ip",
                               "none", "null", "changeme", "todo"})


@rule("AW103", "machine-rank-out-of-range", Severity.ERROR,
      fix="Set machine_rank to this machine's index, from 0 to num_machines - 1")
def machine_rank_out_of_range(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `machine_rank` that is not below `num_machines`.

    ## Why is this bad?
    Machine ranks run from 0 to `num_machines - 1`. A rank outside that range makes torchrun wait for a node
    that never joins (or fail the rendezvous), and accelerate does not check it.

    ## Example
    ```yaml
    num_machines: 2
    machine_rank: 2
    ```
    Use instead: `machine_rank: 1` on the second machine.
    ```yaml
    num_machines: 2
    machine_rank: 1
    ```
    """
    view = topology_view(ctx)
    if view is None:
        return
    rank = view.machine_rank.strict if view.machine_rank.is_written else None
    machines = machine_count(view)
    if rank is not None and machines is not None and rank >= machines:
        yield Finding("accelerate", ("machine_rank",),
                      f"machine_rank is {rank} but there are only {machines} machine(s) "
                      f"(ranks 0..{machines - 1})")


@rule("AW104", "multi-node-without-main-process", Severity.ERROR,
      fix="Set main_process_ip (and main_process_port) to the address of the machine with rank 0")
def multi_node_without_main_process(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a multi-node config with no `main_process_ip`, or with no `main_process_port` where the launcher
    needs one (`NO`/`MULTI_CPU`, which use the simple launcher). Silent when the plan file beside the config
    says the job is started by per-node commands or SLURM, which pass both to each node at launch.

    ## Why is this bad?
    The simple launcher asserts both ("you need to specify the main process IP"); the torchrun and DeepSpeed
    paths do not check and pass the string `None:29500` as the rendezvous endpoint, so every node hangs or
    fails to connect.

    ## Example
    ```yaml
    num_machines: 2
    num_processes: 16
    ```
    Use instead: add `main_process_ip: 10.0.0.1` and `main_process_port: 29500`.
    ```yaml
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    ```
    """
    if ctx.plan is not None and ctx.plan.launcher.supplies_rendezvous:
        return  # the plan's launcher (SLURM, per-node commands) gives each node the rank and the address
    view = topology_view(ctx)
    if view is None or (machine_count(view) or 1) < 2:
        return
    # per-node commands and SLURM scripts pass both on each node's command line
    handled = ("each node's command passes --main_process_ip and --main_process_port"
               if ctx.launch.supplies_rendezvous else None)
    if view.main_process_ip.written in (NOT_WRITTEN, None):
        yield Finding("accelerate", ("main_process_ip",),
                      f"{machine_count(view)} machines but no main_process_ip for them to meet at", handled=handled)
    if view.main_process_port.written in (NOT_WRITTEN, None) and view.distributed_type.value in SIMPLE_LAUNCHER_TYPES:
        yield Finding("accelerate", ("main_process_port",),
                      f"{machine_count(view)} machines with `distributed_type: {view.distributed_type.value}` need "
                      "main_process_port", handled=handled)


def _looks_like_placeholder(host: str) -> bool:
    text = host.strip()
    try:
        ipaddress.ip_address(text)
        return False
    except ValueError:
        pass
    if text.lower() in PLACEHOLDER_HOSTS or text.isdigit() or re.fullmatch(r"x+(\.x+)*", text, re.I):
        return True
    return re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", text) is None


@rule("AW105", "placeholder-main-process-ip", Severity.WARNING,
      fix="Replace it with the real IP address or host name of the rank-0 machine")
def placeholder_main_process_ip(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a multi-node `main_process_ip` that is neither an IP address nor a host name: a template
    placeholder such as `example`, `xxxx` or the number `1234`.

    ## Why is this bad?
    Every node tries to reach the rank-0 machine at this address; a placeholder fails only after the
    processes start, with a rendezvous timeout or a DNS error.

    ## Example
    ```yaml
    num_machines: 2
    main_process_ip: '1234'
    ```
    Use instead: `main_process_ip: 10.0.0.4`.
    ```yaml
    num_machines: 2
    main_process_ip: 10.0.0.4
    ```
    """
    from accelwiz.rules.placeholders import claimed_placeholder, plan_supplies_rendezvous

    view = topology_view(ctx)
    host = view.main_process_ip.strict if view else None
    if view is None or host is None or (machine_count(view) or 1) < 2:
        return
    if claimed_placeholder(ctx, "main_process_ip") or plan_supplies_rendezvous(ctx):
        return  # a template placeholder is one finding (the placeholder rule's); the plan's launcher replaces it
    if _looks_like_placeholder(host):
        handled = {"handled": "each node's command passes --main_process_ip"} if ctx.launch.supplies_rendezvous \
            else {}
        yield Finding("accelerate", ("main_process_ip",),
                      f"main_process_ip {host!r} is not an IP address or host name", **handled)
