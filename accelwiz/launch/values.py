"""The values `run` puts on a launch line, checked against what the launcher accepts before anything is launched,
written or printed (issue 21.1).

Quoting (launch/shell.py) already keeps every value one word; this refuses the values no launcher would take, so
that a newline or `;` in `main_process_ip` is one line and exit 2, not a quoted word that fails on every node
after the job waited in the queue. These are checked with or without --force: `--force` launches despite the
rules' findings, never a value the launcher itself refuses.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from pathlib import Path

from accelwiz.errors import UsageError
from accelwiz.launch.shell import printable, unprintable
from accelwiz.launch.spec import LaunchSpec

# RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens (socket.getaddrinfo, which
# torch's TCPStore and torchrun's rendezvous use, takes nothing else but IP literals).
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
# torch's rendezvous registry names (torch/distributed/elastic/rendezvous/registry.py: static, c10d, etcd,
# etcd-v2, and plugins registered under a name): a word, never shell syntax.
_BACKEND = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def is_host(value: str) -> bool:
    """An IP address or a host name, as torchrun's rendezvous endpoint takes it."""
    try:
        ipaddress.ip_address(value.strip("[]"))
        return True
    except ValueError:
        pass
    return 0 < len(value) <= 253 and all(_LABEL.fullmatch(label) for label in value.rstrip(".").split("."))


def check_file_names(paths: Iterable[Path | str | None]) -> None:
    """The config and script names go on every launch line and into messages: a control character in one (a
    newline, ESC) is refused before the name is shown anywhere."""
    for path in paths:
        if path is not None and unprintable(str(path)):
            raise UsageError(
                f"the file name {printable(repr(str(path)))} has a control character (a newline, ESC, ...): it "
                "cannot be passed to the nodes or shown safely",
                hint="rename the file to a name without control characters",
            )


def check_launch_values(spec: LaunchSpec, config_path: Path) -> None:
    """UsageError (exit 2, one line) for a launch value the launcher would refuse or that a terminal would run."""
    name = printable(str(config_path))
    ip = spec.main_process_ip
    if ip is not None and not is_host(ip):
        raise UsageError(
            f"{name}: main_process_ip {printable(repr(ip))} is not an IP address or a host name",
            hint="write the address of machine 0, e.g. `main_process_ip: 10.0.0.1`, or remove the key and let "
                 "`run --slurm` / $MAIN_PROCESS_IP supply it",
        )
    backend = spec.rdzv_backend
    if backend is not None and not _BACKEND.fullmatch(backend):
        raise UsageError(
            f"{name}: rdzv_backend {printable(repr(backend))} is not a rendezvous backend name",
            hint="write `rdzv_backend: c10d` (or static), or remove the key",
        )
    port = spec.main_process_port
    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"{name}: main_process_port {port} is not a TCP port",
                         hint="write a port between 1024 and 65535, e.g. 29500")
