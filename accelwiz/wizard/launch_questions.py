"""How the machines of a multi-node run start, asked last: SLURM or the node commands (`accelwiz run
--print-node-commands`), and, for node commands, this machine's rank and the main address; the port and the
rendezvous for both. The questions (in the catalog's order), their choices and their checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard import predicates as p
from accelwiz.wizard.answers import Launcher
from accelwiz.wizard.catalog_types import Choice, Question
from accelwiz.wizard.suggest import in_range


def launcher_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("SLURM (one srun starts every node; ranks come from SLURM)", Launcher.slurm),
        Choice("Node commands (`accelwiz run --print-node-commands`: run the printed command on each machine)",
               Launcher.node_commands),
    ]


def rdzv_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("c10d (torch's rendezvous; tolerates nodes starting at different times)", "c10d"),
        Choice("static (fixed ranks; every node must start together)", "static"),
    ]


def verify_machine_rank(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    machines = int(answers.get("num_machines") or 1)
    in_range("machine_rank", value, 0, machines - 1, f"0 (main) to {machines - 1}")


def verify_port(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    in_range("main_process_port", value, 1, 65535)


def verify_address(value: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    if not value or any(c.isspace() for c in value):
        raise UsageError(f"main_process_ip {value!r} is not an address", hint="an IP address or host name")


LAUNCH_QUESTIONS: tuple[Question, ...] = (
    Question(
        "launcher",
        "How will the machines be started?",
        kind="select",
        when=p.is_multi_node,
        default=Launcher.slurm,
        choices=launcher_choices,
        help="SLURM derives each machine's rank; otherwise run one command per machine.",
    ),
    Question(
        "machine_rank",
        "Rank of this machine (0 = main)?",
        kind="int",
        when=p.launches_by_node_commands,
        default=0,
        verify=verify_machine_rank,
        help="0 on the machine whose address the others connect to.",
    ),
    Question(
        "main_process_ip",
        "IP address of the main machine (rank 0)?",
        kind="text",
        when=p.launches_by_node_commands,
        default=None,
        verify=verify_address,
        help="Every machine connects here; it must be reachable from all of them.",
    ),
    Question(
        "main_process_port",
        "Port on the main machine?",
        kind="int",
        when=p.is_multi_node,
        default=29500,
        verify=verify_port,
        help="A free TCP port on the main machine, open to the others.",
    ),
    Question(
        "rdzv_backend",
        "Rendezvous backend?",
        kind="select",
        when=p.is_multi_node,
        default="c10d",
        choices=rdzv_choices,
        help="How the machines find each other at start-up.",
    ),
)
