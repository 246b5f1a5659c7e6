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
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(os.path.expanduser(base)) / "accelwiz" / "torch_extensions" / build


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


def apply(changes: Sequence[EnvChange], environ: Mapping[str, str]) -> dict[str, str]:
    return {**environ, **{c.name: c.value for c in changes}}
