"""Multi-node on this one machine, for real: the two `accelwiz run --print-node-commands` lines run as two process
trees on loopback (CPU DDP with c10d rendezvous, DeepSpeed ZeRO-3 with static rendezvous), and the sbatch script
of `accelwiz run --slurm` on a two-node SLURM cluster started here (munged, slurmctld, two slurmd).

    python benchmarks/multinode.py [--steps 10] [--skip-slurm]

The same code paths as tests/launch/test_multinode_loopback.py and tests/launch/test_slurm_cluster.py (which it
imports). Reports each run's wall time (first node started -> both exited, or `sbatch --wait`), the trainer's own
training seconds and final loss, and that every rank's parameter checksum agreed. Writes
benchmarks/results/multinode.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _timing import machine  # noqa: E402

from tests.launch.test_multinode_loopback import run_two_nodes  # noqa: E402
from tests.launch.test_slurm_cluster import DAEMONS, slurm_cluster, submit_two_node_job  # noqa: E402


def summary(name: str, wall: float, ok: bool, report: dict | None) -> dict:
    row = {"run": name, "ok": ok, "wall_s": round(wall, 1)}
    if report:
        ranks = report.get("ranks") or []
        row.update({
            "steps": report["steps"], "world_size": report["world_size"],
            "train_seconds": report["train_seconds"], "loss_first": round(report["loss_first"], 4),
            "final_loss": round(report["final_loss"], 4),
            "node_ranks": sorted(r["node_rank"] for r in ranks),
            "slurm_nodes": sorted(r["slurm_node"] for r in ranks if r.get("slurm_node")),
            "checksums_agree": len({r["parameter_checksum"] for r in ranks}) == 1,
        })
    print(json.dumps(row))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--skip-slurm", action="store_true")
    args = parser.parse_args()
    rows = []
    for kind, name in (("ddp", "loopback 2 machines x 1 process, CPU DDP (c10d)"),
                       ("zero3", "loopback 2 machines x 1 process, DeepSpeed ZeRO-3 (static)")):
        with tempfile.TemporaryDirectory() as directory:
            ran = run_two_nodes(Path(directory), kind, steps=args.steps)
            rows.append(summary(name, ran["wall_s"], ran["codes"] == [0, 0], ran["report"]))
    if not args.skip_slurm and all(shutil.which(tool) for tool in DAEMONS):
        with tempfile.TemporaryDirectory() as directory, slurm_cluster(Path(directory) / "slurm") as cluster:
            ran = submit_two_node_job(cluster, Path(directory) / "work", steps=args.steps)
            rows.append(summary("SLURM 2 nodes x 1 process, CPU DDP (sbatch --wait)", ran["wall_s"],
                                ran["code"] == 0, ran["report"]))
    result = {"machine": machine(), "load_average_1m": os.getloadavg()[0], "steps": args.steps, "runs": rows}
    out = HERE / "results" / "multinode.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
