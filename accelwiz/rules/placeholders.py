"""AW150: template placeholders left in the values `accelerate launch` uses to start and join the processes.

A template's `CONFIG_CHIEF_IP`, `<MASTER_IP>`, `xxx.xxx.xxx.xxx`, `$MASTER_ADDR` or `${MACHINE_RANK}` is plain text
to accelerate: it never expands environment variables in the YAML (it copies the value onto its argparse namespace,
`_validate_launch_command`), so the text reaches torchrun or the DeepSpeed launcher as written. Each such value has
a launcher flag that replaces it (a flag given on the command line wins over the file).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

# key -> (the launcher flag that supplies it, what it is, whether it only matters with several machines)
LAUNCH_VALUES: dict[str, tuple[str, str, bool]] = {
    "main_process_ip": ("--main_process_ip", "an address", True),
    "main_process_port": ("--main_process_port", "a port", True),
    "machine_rank": ("--machine_rank", "a rank", False),
    "num_machines": ("--num_machines", "a count", False),
    "num_processes": ("--num_processes", "a count", False),
    "gpu_ids": ("--gpu_ids", "a device list", False),
}
# The launcher of a plan with per-node commands or SLURM passes these to every node.
RENDEZVOUS_KEYS = frozenset({"main_process_ip", "main_process_port", "machine_rank"})

_SHELL_VARIABLE = re.compile(r"\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)")
_BRACKETED = re.compile(r"^\s*(<[^<>]+>|\{\{?[^{}]+\}?\}|\[[A-Za-z_ ]+\])\s*$")
_MASKED = re.compile(r"^[xX*#?]{2,}(\.[xX*#?]+)*$|^[xX*#?]+(\.[xX*#?]+)+$")  # xxx.xxx.xxx.xxx, xxxx, X.X.X.X
_VARIABLE_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")  # CONFIG_CHIEF_IP, MASTER_ADDR, MACHINE_RANK
_YOUR = re.compile(r"^(your|my)[_\- ]", re.I)  # your_ip, YOUR_MASTER_ADDR, my-host


def placeholder_kind(value: Any) -> str | None:
    """Why `value` is plainly a template placeholder rather than a value, or None.

    Only text that no launcher could use is a placeholder: a real host name never has `$`, `<>`, `{}`, `_`
    between capitals or a mask of x's; a port, rank or count is a number."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if _SHELL_VARIABLE.search(text):
        return "a shell variable, which accelerate does not expand in the YAML"
    if _BRACKETED.match(text):
        return "a template slot"
    if _MASKED.match(text):
        return "a masked value"
    if _VARIABLE_NAME.match(text):
        return "a variable name, not its value"
    if _YOUR.match(text):
        return "a template slot"
    return None


def claimed_placeholder(ctx: CheckContext, key: str) -> bool:
    """Whether the YAML's top-level `key` holds a launch-value placeholder, which this module's rule owns (it
    reports it, or stays silent where the launch replaces it or does not use it): the generic type, value and
    address rules stay silent on it, so one problem is one finding."""
    document = ctx.accelerate
    if key not in LAUNCH_VALUES or document is None or not isinstance(document.data, dict):
        return False
    return placeholder_kind(document.get(key)) is not None


def plan_supplies_rendezvous(ctx: CheckContext) -> bool:
    """The plan's launcher (per-node commands, SLURM) passes RENDEZVOUS_KEYS to each node: the file's are replaced."""
    plan = getattr(ctx, "plan", None)
    return plan is not None and plan.launcher.supplies_rendezvous


@rule("AW150", "placeholder-launch-value", Severity.ERROR,
      fix="Write the real value, or pass it to `accelerate launch` with the flag named in the message")
def placeholder_launch_value(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a template placeholder left in an address, port, rank or count of the Accelerate YAML:
    `main_process_ip: xxx.xxx.xxx.xxx`, `CONFIG_CHIEF_IP`, `<MASTER_IP>`, `$MASTER_ADDR`, `${MASTER_PORT}`,
    `machine_rank: MACHINE_RANK`, `num_processes: $WORLD_SIZE`. Silent when the plan file says the launcher supplies
    the rendezvous (per-node commands or SLURM pass `--machine_rank`, `--main_process_ip` and
    `--main_process_port` to each node); the address and port only matter with several machines.

    ## Why is this bad?
    accelerate does not expand environment variables or templates in its config file: the text is handed to
    torchrun or the DeepSpeed launcher as written, and every node fails to resolve the address, or the launcher
    stops on a rank or count that is not a number. The flag on the command line is what replaces it.

    ## Example
    ```yaml
    num_machines: 2
    num_processes: 16
    machine_rank: $MACHINE_RANK
    main_process_ip: <MASTER_IP>
    ```
    Use instead: leave them out of the file and launch each node with
    `accelerate launch --machine_rank $RANK --main_process_ip 10.0.0.4 ...`, or write the values.
    """
    document = ctx.accelerate
    if document is None or not isinstance(document.data, dict):
        return
    planned_rendezvous = plan_supplies_rendezvous(ctx)
    launch = getattr(ctx, "launch", None)
    handled_by_launch = bool(launch is not None and getattr(launch, "supplies_rendezvous", False))
    written = ctx.effective.num_machines
    machines = written.strict if written.is_written else None  # absent or malformed: maybe several
    several = not (machines is not None and machines <= 1)
    for key, (flag, what, multi_node_only) in LAUNCH_VALUES.items():
        value = document.get(key)
        why = placeholder_kind(value)
        if why is None:
            continue
        if key in RENDEZVOUS_KEYS and planned_rendezvous:
            continue  # the plan's launcher passes it to each node
        if multi_node_only and not several:
            continue  # one machine: accelerate does not use the rendezvous address
        # per-node commands (run --print-node-commands, --slurm) pass the rendezvous flags themselves
        handled = {"handled": f"each node's command passes {flag}"} if key in RENDEZVOUS_KEYS and handled_by_launch \
            else {}
        yield Finding("accelerate", (key,),
                      f"{key} {value!r} is a placeholder ({why}), not {what}: pass {flag} to `accelerate launch` "
                      f"or write the value", fix=f"Replace it, or pass {flag} at launch", **handled)
