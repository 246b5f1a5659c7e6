"""The one line `accelwiz run` says when the machine it judges and launches on is not the one the plan was made
for (`init --system 1xRTX4090`, then `run` on a laptop): the memory rules then judge this machine, so a finding
such as AW502 reads as what it is."""

from __future__ import annotations

from typing import Any


def machine_line(plan: Any, system: Any) -> str | None:
    """'the plan was made for 1xRTX4090 (1 x 1 NVIDIA GeForce RTX 4090); this machine has no GPU: the checks
    below judge this machine'; None where the GPUs agree (or there is no plan or profile to compare)."""
    if plan is None or system is None:
        return None
    planned = plan.system
    gpus = [g.name for g in system.gpus]
    same_gpu = not planned.gpu or not gpus or planned.gpu == gpus[0]
    if planned.gpus_per_machine == len(gpus) and same_gpu:
        return None
    made = (f"{planned.name} ({planned.machines} x {planned.gpus_per_machine} {planned.gpu or 'GPU(s)'})"
            if planned.gpus_per_machine else f"{planned.name} (no GPU)")
    here = f"{len(gpus)} x {gpus[0]}" if gpus else "no GPU"
    return f"the plan was made for {made}; this machine has {here}: the checks below judge this machine"
