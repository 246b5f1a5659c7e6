"""The rendezvous of the preflight: node 0 hosts a torch.distributed.TCPStore, every node posts what it has and
waits, until a deadline, for the others' posts; then the main-port checks.

The store listens on its own port (by default the main port + 1) so that the main port itself can be tested:
node 0 binds it (is it free?) and the others connect to it (is it reachable?), and it is free again for training.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

POLL_SECONDS = 0.1


class StoreUnreachable(Exception):  # noqa: N818 - a situation the caller reports, not a bug
    """Node 0's store could not be hosted or reached."""

    def __init__(self, reason: str, *, held: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.held = held  # something else answers on the port


@dataclass
class Shared:
    """What a phase collected: each node's post (by rank), the ranks that never posted, and whether node 0's
    store stopped answering before the deadline."""

    posts: dict[int, bytes]
    missing: list[int]
    lost: str | None = None


def import_torch_distributed() -> Any:
    # c10d logs every retry and timeout as a C++ warning with a stack trace; the preflight reports its own.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import torch.distributed

    return torch.distributed


def open_store(address: str, port: int, *, host: bool, nodes: int, deadline: float) -> Any:
    """Host the store (node 0) or connect to it, until `deadline` (time.monotonic). Node 0's store listens on
    the address it was given only (`listen_on`), not on every interface."""
    TCPStore = import_torch_distributed().TCPStore  # noqa: N806 - the class

    listener = listen_on(address, port) if host else None
    if not host:
        # Wait for node 0's listener ourselves: c10d's client retries with a back-off that overshoots its own
        # timeout (29 s for 11.5 s measured here), and the deadline is a promise.
        _await_listener(address, port, deadline)
    timeout = timedelta(seconds=max(1.0, deadline - time.monotonic()))
    built: list[Any] = []
    failed: list[BaseException] = []
    given = {} if listener is None else {"master_listen_fd": listener.fileno()}

    def build() -> None:
        try:
            built.append(TCPStore(address, port, nodes, host, timeout=timeout, wait_for_workers=False, **given))
        except (RuntimeError, OSError) as exc:  # DistNetworkError and DistStoreError are RuntimeErrors
            failed.append(exc)

    # A listener that is not a TCPStore (another program on the port) makes the client's handshake wait
    # forever, whatever its timeout: build the store in a thread the deadline can leave behind.
    thread = threading.Thread(target=build, name="accelwiz-store", daemon=True)
    thread.start()
    thread.join(max(1.0, deadline - time.monotonic()))
    if built:
        if listener is not None:
            listener.detach()  # the store serves on this descriptor now; the process's exit closes it
        return built[0]
    if listener is not None:
        listener.close()
    if failed:
        raise StoreUnreachable(first_line(failed[0]))
    raise StoreUnreachable(f"port {port} accepts connections but does not answer as the preflight's store",
                           held=True)


def listen_on(address: str, port: int) -> socket.socket:
    """A listening socket on `address`:`port` for node 0's store (torch's own would listen on every interface,
    letting any host that reaches the port post as a node). A host name that resolves to loopback on node 0
    alone (Debian's 127.0.1.1 for the machine's own name) while the others resolve it to the network address
    is served on every interface, as torch does: the records' seal (wire.py) still keeps strangers out."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise StoreUnreachable(f"{address} does not resolve: {exc.strerror or exc}") from None
    loopback_name = address == "localhost" or _is_loopback(address)
    targets = [info for info in infos if loopback_name or not _is_loopback(info[4][0])]
    if not targets:  # a name that resolves to loopback here only
        family = socket.AF_INET6 if socket.has_dualstack_ipv6() else socket.AF_INET
        targets = [(family, socket.SOCK_STREAM, 0, "", ("::" if family == socket.AF_INET6 else "", port))]
    error: OSError | None = None
    for family, kind, proto, _, where in targets:
        server = socket.socket(family, kind, proto)
        try:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as torch's store sets it
            if family == socket.AF_INET6 and where[0] == "::":
                server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            server.bind(where)
            server.listen(128)
            return server
        except OSError as exc:
            server.close()
            error = exc
    assert error is not None
    code = errno.errorcode.get(error.errno or 0, "")
    raise StoreUnreachable(f"cannot listen on {address}:{port}: {error.strerror or error}{f' ({code})' if code else ''}"
                           f"{' (is it an address of this node?)' if error.errno == errno.EADDRNOTAVAIL else ''}")


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def _await_listener(address: str, port: int, deadline: float) -> None:
    while True:
        remaining = deadline - time.monotonic()
        try:
            with socket.create_connection((address, port), timeout=max(0.2, min(1.0, remaining))):
                return
        except OSError as exc:
            if remaining <= 0:
                raise StoreUnreachable(f"nothing answered ({exc.strerror or exc})") from None
        time.sleep(0.1)


def share(store: Any, phase: str, rank: int, payload: bytes, nodes: int, deadline: float) -> Shared:
    """Post `payload` under `phase` and collect every node's post (raw bytes: wire.open_record judges them),
    until all are there or the deadline.

    Each node counts itself in with one atomic add, and waiting polls that one counter: one request per poll
    whatever the node count, instead of one per node per poll on node 0's store. A count that a stranger
    inflated ends the wait early, never makes it longer: a key is read only once `check` says it is there,
    and every request is bounded by what is left of the deadline.
    """
    posts: dict[int, bytes] = {}
    try:
        store.set_timeout(timedelta(seconds=max(1.0, deadline - time.monotonic())))
        store.set(f"{phase}/{rank}", payload)
        count = store.add(f"{phase}/count", 1)
        while count < nodes and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            count = store.add(f"{phase}/count", 0)
        for other in range(nodes):
            if other == rank:
                posts[other] = payload
            elif store.check([f"{phase}/{other}"]):
                posts[other] = store.get(f"{phase}/{other}")
    except (RuntimeError, OSError) as exc:
        return Shared(posts, [r for r in range(nodes) if r not in posts], lost=first_line(exc))
    return Shared(posts, [r for r in range(nodes) if r not in posts])


@contextlib.contextmanager
def main_port_held(port: int) -> Iterator[str | None]:
    """Node 0: bind and listen on the main port for the length of the preflight, so that the other nodes can
    connect to it. Yields None, or why it could not be bound (another job or a stale process holds it)."""
    family = socket.AF_INET6 if socket.has_dualstack_ipv6() else socket.AF_INET
    try:
        # SO_REUSEADDR (create_server's default on POSIX) as torch's store sets it: a port in TIME_WAIT after a
        # previous run is free for training, a port another process listens on is not.
        server = socket.create_server(("", port), family=family, dualstack_ipv6=family == socket.AF_INET6)
    except OSError as exc:
        yield exc.strerror or str(exc)
        return
    with server:
        yield None


def reach_main_port(address: str, port: int, timeout: float) -> str | None:
    """Other nodes: None when a TCP connection to node 0's main port succeeds, else why not."""
    try:
        with socket.create_connection((address, port), timeout=max(0.5, timeout)):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


def is_local_address(address: str) -> bool | None:
    """Whether `address` names this machine (one of its interfaces' addresses); None when it does not resolve.
    Node 0 asks when nodes are missing: a main address that is not node 0's sends the others elsewhere."""
    import psutil

    try:
        resolved = {info[4][0] for info in socket.getaddrinfo(address, None)}
    except OSError:
        return None
    mine = {a.address.split("%")[0] for addresses in psutil.net_if_addrs().values() for a in addresses
            if a.family in (socket.AF_INET, socket.AF_INET6)}
    return bool(resolved & mine)


def resolve(address: str) -> str | None:
    """None when `address` resolves, else the resolver's message."""
    try:
        socket.getaddrinfo(address, None)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def first_line(exc: BaseException) -> str:
    """The message without the rest: c10d's messages carry a C++ stack after the first line."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
