"""Real system tools for the tests: installed with Debian's apt when missing, or a skip that says why.

The developers' guide asks tests that need a real component to install it where they can (CI runs as root on a
Debian machine with the package mirror reachable) and to skip, with the reason, only where that is impossible.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

import pytest


def ensure_programs(programs: Sequence[str], packages: Sequence[str]) -> None:
    """Make every program in `programs` available, installing `packages` with apt if one is missing."""
    if all(shutil.which(program) for program in programs):
        return
    wanted = " and ".join(packages)
    if os.geteuid() != 0:
        pytest.skip(f"{wanted} not installed, and installing it needs root")
    if shutil.which("apt-get") is None:
        pytest.skip(f"{wanted} not installed, and there is no apt-get to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends", *packages]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.skip(f"`{' '.join(command)}` failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    if not all(shutil.which(program) for program in programs):
        pytest.skip(f"apt installed {wanted}, but {', '.join(programs)} are not all on PATH")
