"""Shared helpers for the startup benchmarks: time whole commands as a user runs them."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def console_script(name: str) -> str:
    """The real console script next to this interpreter. Version managers such as pyenv put a bash "shim" first
    on PATH that adds 0.1-0.2 s to every command; a user's virtualenv has no shim, so we time the script itself."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def time_command(argv: Sequence[str], *, runs: int, warmup: int = 1, env: dict[str, str] | None = None,
                 ok_codes: Sequence[int] = (0, 1)) -> dict[str, float]:
    """Median/min/max wall seconds of `argv` over `runs` runs after `warmup` untimed runs."""
    samples = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env={**os.environ, **(env or {})})
        elapsed = time.perf_counter() - start
        if done.returncode not in ok_codes:
            raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr.decode()[-500:]}")
        if i >= warmup:
            samples.append(elapsed)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples), "runs": runs}


def machine() -> dict[str, object]:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"cpu": cpu, "logical_cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform()}
