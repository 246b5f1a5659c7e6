"""Whether the run's CUDA caching allocator uses expandable segments, from the environment it launches with.

torch reads its allocator settings once, from `PYTORCH_CUDA_ALLOC_CONF`, else `PYTORCH_ALLOC_CONF` (torch 2.13
c10/cuda/CUDAAllocatorConfig.h `instance()`: the CUDA name first, the generic one only where it is unset):
comma-separated `key:value` pairs, `expandable_segments:True|False` among them (the last one said wins, as
`parseArgs` walks them in order). Any other spelling of the value ("true", "1") is refused by torch with
"Expected a single True/False argument for expandable_segments" at the process's first CUDA allocation; an
estimate of that run has nothing to size, so such a value is ignored here, with a note saying why.

`accelwiz run` launches with the user's environment and exports nothing of the allocator's
(launch/environment.py), so the estimate `run` prints reads the same variable its training processes will. No
torch here: `check` and `estimate` start fast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from accelwiz.resolution.sourced import DEFAULT, ENVIRONMENT, Sourced

NAMES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")  # in the order torch reads them
_KEY = "expandable_segments"


def _said(environ: Mapping[str, str]) -> tuple[str, str, str | None] | None:
    """The variable torch reads, its setting and the last `expandable_segments` value in it (None: not set
    there); None where neither variable is set."""
    name = next((n for n in NAMES if n in environ), None)
    if name is None:
        return None
    said = None
    for pair in environ[name].split(","):
        key, _, value = (part.strip() for part in pair.partition(":"))
        if key == _KEY:
            said = value
    return name, environ[name], said


def _refusal(name: str, setting: str, said: str) -> str:
    return (f"{name}={setting!r} ignored: torch accepts only {_KEY}:True or {_KEY}:False (got {said!r}) and "
            "refuses anything else at the first CUDA allocation")


def expandable_segments(environ: Mapping[str, str] | None = None) -> Sourced:
    """The environment's `expandable_segments` (source "environment"), else off (source "default")."""
    found = _said(os.environ if environ is None else environ)
    if found is None:
        return Sourced(False, DEFAULT, "no PYTORCH_CUDA_ALLOC_CONF: torch's default caching allocator")
    name, setting, said = found
    if said is None:
        return Sourced(False, DEFAULT, f"{name}={setting!r} does not set {_KEY}")
    if said not in ("True", "False"):
        return Sourced(False, DEFAULT, _refusal(name, setting, said))
    return Sourced(said == "True", ENVIRONMENT, f"{name}={setting}")


def refused_setting(environ: Mapping[str, str] | None = None) -> str | None:
    """The note on a value torch refuses (what `estimate` warns of), else None."""
    found = _said(os.environ if environ is None else environ)
    if found is None:
        return None
    name, setting, said = found
    return None if said is None or said in ("True", "False") else _refusal(name, setting, said)
