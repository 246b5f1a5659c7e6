"""Start `accelwiz doctor` as separate per-node process trees on loopback, each with its own environment."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
GUARD = 90  # the test's own limit per process, far above what the preflight promises: a hang fails, not blocks
# Variables of the machine running the tests that would change what a node reads about itself.
_DROPPED = ("SLURM_", "MASTER_", "RANK", "NODE_RANK", "WORLD_SIZE", "NCCL_", "GLOO_", "ACCELERATE_")


@dataclass
class Node:
    rank: int
    env: dict[str, str] = field(default_factory=dict)
    pythonpath: tuple[str, ...] = ()  # before the worktree: a node with other packages
    prefix: tuple[str, ...] = ()  # a wrapper (unshare ... sh -c) that changes the node's view of the disk
    text: bool = False


@dataclass
class Ended:
    code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def rows(self) -> list[tuple[str, int | None, str]]:
        return [(f["problem"], f["node"], f["check"]) for f in self.report["findings"]]


class Cluster:
    """Two nodes (by default) meeting at 127.0.0.1 on free ports, sharing `output` unless a wrapper hides it."""

    def __init__(self, tmp_path: Path, nodes: int = 2) -> None:
        self.nodes, self.tmp = nodes, tmp_path
        self.main_port = free_port()
        self.store_port = self.main_port + 1 if _free(self.main_port + 1) else free_port()
        self.output = tmp_path / "output"
        self.output.mkdir(parents=True)

    def argv(self, node: Node) -> list[str]:
        return [sys.executable, "-m", "accelwiz", "doctor", "--nodes", str(self.nodes), "--node-rank",
                str(node.rank), "--main-address", "127.0.0.1", "--main-port", str(self.main_port),
                "--store-port", str(self.store_port), "--output-dir", str(self.output),
                "--cache-dir", str(self.tmp / f"cache{node.rank}"), "--format", "text" if node.text else "json"]

    def start(self, node: Node, argv: list[str] | None = None) -> subprocess.Popen[str]:
        """Start one node: `accelwiz doctor` with this cluster's flags, or `argv` (a shell line, say)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
        env.update(node.env, PYTHONPATH=os.pathsep.join([*node.pythonpath, str(REPO)]), OMP_NUM_THREADS="1")
        # this interpreter's `accelwiz` first on PATH, as on a node where accelwiz is installed
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.Popen([*node.prefix, *(argv or self.argv(node))], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.tmp)

    def run(self, *nodes: Node) -> list[Ended]:
        """Start every node at once; wait for all of them."""
        return wait([self.start(node) for node in nodes])


def _free(port: int) -> bool:
    try:
        socket.create_server(("127.0.0.1", port)).close()
    except OSError:
        return False
    return True


def wait(started: list[subprocess.Popen[str]]) -> list[Ended]:
    ended = []
    for process in started:
        try:
            out, err = process.communicate(timeout=GUARD)
        except subprocess.TimeoutExpired:
            for other in started:
                other.kill()
            raise
        ended.append(Ended(process.returncode, out, err))
    return ended


def in_mount_namespace(script: str) -> tuple[str, ...]:
    """A wrapper that runs the node in its own user and mount namespace after `script` (shell, run as that
    namespace's root) changed its view of the disk; skips when this kernel or container does not allow it."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rm (user and mount namespaces) is not available here")
    return (unshare, "-rm", "sh", "-c", f'{script} && exec "$@"', "node")
