"""What a run measured, written as `run_report.json` beside the checkpoints.

Peak memory is the number people argue about, so the report puts the measured peak of every rank beside
accelwiz's own estimate for the same model and settings (when `accelwiz.estimate` can produce one).
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path
from typing import Any

REPORT_FILE = "run_report.json"


def peak_memory_bytes(device_type: str) -> tuple[int, str]:
    """(peak bytes, what was measured): CUDA's allocator peak on GPU, else this process's peak RSS."""
    if device_type == "cuda":
        import torch

        return int(torch.cuda.max_memory_allocated()), "cuda_max_memory_allocated"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in kilobytes on Linux and in bytes on macOS
    return int(rss if sys.platform == "darwin" else rss * 1024), "process_peak_rss"


def estimate_for_run(settings: dict[str, Any]) -> dict[str, Any]:
    """accelwiz's memory estimate for these settings, or why there is none; never raises."""
    from accelwiz.trainer.estimate_bridge import estimate_from_settings

    try:
        return {"available": True, **estimate_from_settings(settings)}
    except Exception as exc:  # noqa: BLE001 - the estimate is a comparison, never a reason to fail a finished run
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}


def write_report(output_dir: Path, report: dict[str, Any]) -> Path:
    path = output_dir / REPORT_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(path)  # never a half-written report
    return path
