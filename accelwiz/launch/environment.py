"""Environment variables `accelerate launch` needs on this machine, each with the reason it is set."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from accelwiz.launch.spec import LaunchSpec


@dataclass(frozen=True)
class EnvChange:
    name: str
    value: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


def torch_extensions_cache(environ: Mapping[str, str], build: str) -> Path:
    """A per-user cache, one directory per Python and torch build.

    Ops compiled for one build do not load in another (torch's own default separates py311_cpu from
    py311_cu128 the same way), and setting TORCH_EXTENSIONS_DIR turns that separation off.
    """
    return cache_home(environ) / "accelwiz" / "torch_extensions" / build


def cache_home(environ: Mapping[str, str]) -> Path:
    """The user's cache folder: XDG_CACHE_HOME, else ~/.cache (where torch's own extensions folder lives too)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(os.path.expanduser(base))


def torch_build() -> str:
    """`py311-torch2.13.0+cpu`: the interpreter and the installed torch wheel, read without importing torch."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "none"
    return f"py{sys.version_info.major}{sys.version_info.minor}-torch{torch_version}"


def environment_changes(
    spec: LaunchSpec, *, gpu_count: int | None, environ: Mapping[str, str], build: str = "default"
) -> list[EnvChange]:
    """What to add to the child's environment; never overrides a variable the user already set.

    `gpu_count` is None for processes on other machines (an sbatch script): no CPU fallback for those.
    """
    changes = []
    if (
        spec.distributed_type == "MULTI_GPU"
        and spec.num_processes > 1
        and gpu_count == 0
        and "ACCELERATE_USE_CPU" not in environ
    ):
        changes.append(
            EnvChange(
                "ACCELERATE_USE_CPU",
                "true",
                f"no GPU here: run the {spec.num_processes} processes as CPU DDP on gloo (otherwise each would train "
                "alone, unsynchronised)",
            )
        )
    if spec.uses_deepspeed and "TORCH_EXTENSIONS_DIR" not in environ:
        changes.append(
            EnvChange(
                "TORCH_EXTENSIONS_DIR",
                str(torch_extensions_cache(environ, build)),
                "DeepSpeed JIT-compiles its ops on first use (30-50 s); cache them once per user",
            )
        )
    return changes


# Variables whose value is a path or a fact of the machine that computed it: never carried to other machines.
MACHINE_SPECIFIC = frozenset({"TORCH_EXTENSIONS_DIR"})
CPU_FALLBACK = "ACCELERATE_USE_CPU"


def portable_changes(spec: LaunchSpec, here: Sequence[EnvChange] = (), *, cpu_nodes: bool) -> list[EnvChange]:
    """What the other machines of a multi-node run need (per-node commands, an sbatch script).

    `here` are the changes computed on this machine: those that mean the same on every machine are kept, paths
    of this one dropped. `cpu_nodes` (the plan's machines have no GPU) adds the CPU fallback for MULTI_GPU, as
    `environment_changes` does for a launch here.
    """
    changes = [c for c in here if c.name not in MACHINE_SPECIFIC and c.name != CPU_FALLBACK]
    if cpu_nodes and spec.distributed_type == "MULTI_GPU" and spec.num_processes > 1:
        changes.insert(0, EnvChange(CPU_FALLBACK, "true", "the plan's machines have no GPU: train together as CPU "
                                                          "DDP on gloo"))
    return changes


def apply(changes: Sequence[EnvChange], environ: Mapping[str, str]) -> dict[str, str]:
    return {**environ, **{c.name: c.value for c in changes}}
