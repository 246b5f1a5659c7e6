"""Run a one-process DeepSpeed engine script on the CPU and read the lines it prints: the ground truth that the
host-RAM, bf16-state and ZeRO-3 gathering tests compare the estimator with.

Each script builds a tiny model from a config (argv[1]) for each setting (argv[2]) and prints one line per
setting starting with a tag. The engine runs in its own process so DeepSpeed's process group and op builds do
not leak into the test session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port


def engine_lines(tmp_path: Path, source: str, model: dict[str, Any], settings: list, tag: str, *,
                 what: str, env: dict[str, str] | None = None) -> list[list[str]]:
    """The fields after `tag` of each line the script printed, one per setting; a skip naming `what` and the
    script's last error line where DeepSpeed could not run here."""
    pytest.importorskip("deepspeed")
    script = tmp_path / "engine.py"
    script.write_text(source)
    config = {k: v for k, v in model.items() if k != "model_type"}
    environment = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                   "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", **(env or {})}
    run = subprocess.run([sys.executable, str(script), json.dumps(config), json.dumps(settings)],
                         capture_output=True, text=True, env=environment, timeout=900, check=False)
    lines = [line.split()[1:] for line in run.stdout.splitlines() if line.startswith(f"{tag} ")]
    if len(lines) != len(settings):
        pytest.skip(f"{what} did not run here: {(run.stderr.strip().splitlines() or ['?'])[-1]}")
    return lines
