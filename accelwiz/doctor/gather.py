"""What one node knows about itself: GPUs, Python and library versions, the NCCL/GLOO environment and whether
the interfaces it names exist, and whether the output and cache folders take a file.

No torch import: GPUs come from NVML through accelwiz.probe, versions from package metadata.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import stat
from collections.abc import Mapping
from pathlib import Path

from accelwiz.doctor.model import FolderCheck, GpuFacts, InterfaceCheck, NodeFacts

# The libraries whose versions must agree across nodes: a different torch or NCCL build, or a different
# accelerate/deepspeed/transformers/trl, changes collectives, sharding or checkpoint formats between ranks.
COMPARED_PACKAGES = ("torch", "accelerate", "deepspeed", "transformers", "trl")
TOKEN_PREFIX = ".accelwiz-preflight-"


def gather(rank: int, *, folders: Mapping[str, Path], nonce: str, environ: Mapping[str, str]) -> NodeFacts:
    """This node's facts; a fact that cannot be read is recorded as such, never raised."""
    from accelwiz.probe.packages import distribution_version

    usable = usable_interfaces()
    return NodeFacts(
        rank=rank, hostname=socket.gethostname(), python=platform.python_version(),
        packages={name: distribution_version(name) for name in COMPARED_PACKAGES},
        gpus=gpu_facts(environ),
        network_env={k: v for k, v in sorted(environ.items()) if k.startswith(("NCCL_", "GLOO_"))},
        usable_interfaces=usable, interfaces=interface_checks(environ, usable),
        folders=[write_token(role, path, rank, nonce) for role, path in folders.items()],
    )


def gpu_facts(environ: Mapping[str, str]) -> GpuFacts:
    from accelwiz.probe.nvidia import probe_gpus
    from accelwiz.probe.packages import distribution_version, torch_is_cuda_build

    probe = probe_gpus(environ=environ)
    names = sorted({g.name for g in probe.gpus})
    memory = min((g.memory_total_bytes for g in probe.gpus), default=None)
    return GpuFacts(count=len(probe.gpus), models=names, memory_bytes=memory, driver=probe.driver_version,
                    cuda=probe.cuda_driver_version, torch_cuda=torch_is_cuda_build(distribution_version("torch")),
                    note="; ".join(probe.notes) or None)


def usable_interfaces() -> list[str]:
    """Interfaces with an IPv4 or IPv6 address: the only ones NCCL's and gloo's socket transports can bind."""
    import psutil

    families = {socket.AF_INET, socket.AF_INET6}
    return sorted(name for name, addresses in psutil.net_if_addrs().items()
                  if any(a.family in families for a in addresses))


def interface_checks(environ: Mapping[str, str], usable: list[str] | None = None) -> list[InterfaceCheck]:
    usable = usable_interfaces() if usable is None else usable
    checks = []
    if environ.get("NCCL_SOCKET_IFNAME"):
        checks.append(nccl_interfaces(environ["NCCL_SOCKET_IFNAME"], usable))
    if environ.get("GLOO_SOCKET_IFNAME"):
        checks.append(gloo_interfaces(environ["GLOO_SOCKET_IFNAME"], usable))
    return checks


def nccl_interfaces(value: str, usable: list[str]) -> InterfaceCheck:
    """NCCL_SOCKET_IFNAME is a comma list of name prefixes; `=` makes them exact names and `^` excludes them
    (NCCL's environment variable docs). NCCL fails when the filter leaves no interface."""
    text = value.strip()
    exclude = text.startswith("^")
    text = text.lstrip("^")
    exact = text.startswith("=")
    items = [item for item in text.lstrip("=").split(",") if item]

    def selects(name: str, item: str) -> bool:
        return name == item if exact else name.startswith(item)

    if exclude:
        chosen = [n for n in usable if not any(selects(n, item) for item in items)]
        missing = [] if chosen else ["(every interface is excluded)"]
    else:
        chosen = [n for n in usable if any(selects(n, item) for item in items)]
        missing = [item for item in items if not any(selects(n, item) for n in usable)]
    return InterfaceCheck(variable="NCCL_SOCKET_IFNAME", value=value, usable=chosen, missing=missing,
                          ok=bool(chosen))


def gloo_interfaces(value: str, usable: list[str]) -> InterfaceCheck:
    """GLOO_SOCKET_IFNAME is a comma list of exact names, and gloo opens a device on every one: a single absent
    name fails the process group ("Unable to find address for: NAME", gloo/transport/tcp/device.cc)."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    missing = [item for item in items if item not in usable]
    return InterfaceCheck(variable="GLOO_SOCKET_IFNAME", value=value, usable=[i for i in items if i in usable],
                          missing=missing, ok=bool(items) and not missing)


def token_name(nonce: str, role: str, rank: int) -> str:
    """Per role too: the output and cache folders may be one folder."""
    return f"{TOKEN_PREFIX}{nonce}-{role}-node{rank}"


def write_token(role: str, path: Path, rank: int, nonce: str) -> FolderCheck:
    """Create the folder if needed and write a token file into it; the other nodes look for the token to tell
    whether they see the same folder."""
    folder = path.expanduser().absolute()
    token = token_name(nonce, role, rank)
    if folder.exists() and not folder.is_dir():
        return FolderCheck(role=role, path=str(folder), writable=False, error="it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / token).write_text(nonce)
    except OSError as exc:
        return FolderCheck(role=role, path=str(folder), writable=False, error=exc.strerror or str(exc))
    return FolderCheck(role=role, path=str(folder), writable=True, token=token, nonce=nonce)


def sees_token(folder: str, role: str, rank: int, nonce: str | None) -> bool:
    """Whether this node's own `folder` holds node `rank`'s token with its nonce. The name is derived here from
    the nonce (12 hex digits, checked): a peer never names a path node 0 opens, so no peer can ask whether some
    file of this node holds a guess (a content oracle), nor hold it on a FIFO or /dev/zero. Opened without
    following a link or blocking, read only if a regular file, and at most a few bytes."""
    from accelwiz.doctor.wire import valid_nonce

    if not valid_nonce(nonce):
        return False
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
    try:
        descriptor = os.open(Path(folder) / token_name(str(nonce), role, rank), flags)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False
        return os.read(descriptor, len(str(nonce)) + 1) == str(nonce).encode()
    except OSError:
        return False
    finally:
        os.close(descriptor)


def remove_token(check: FolderCheck) -> None:
    if check.token is not None:
        # already gone, or the folder went read-only meanwhile: a stray dot file, nothing worse
        with contextlib.suppress(OSError):
            (Path(check.path) / check.token).unlink()


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """Where the Hugging Face libraries cache models and datasets: HF_HOME, else ~/.cache/huggingface
    (huggingface_hub/constants.py, HF_HOME with XDG_CACHE_HOME's default)."""
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"])
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
