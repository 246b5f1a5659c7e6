"""The GPU table: every NVIDIA and AMD GPU accelwiz knows by name, and how to find one.

The rows live in gpu_table_nvidia.py and gpu_table_amd.py (each citing its data sheet); gpu_specs.py says what a
row holds. `--system NxKEY` takes any key (case-insensitive); the probe matches device names against the patterns.
"""

from __future__ import annotations

import re

from accelwiz.probe.gpu_specs import MIB, GpuModel
from accelwiz.probe.gpu_table_amd import AMD_GPUS
from accelwiz.probe.gpu_table_nvidia import NVIDIA_GPUS

__all__ = ["GPU_MODELS", "MIB", "GpuModel", "find_gpu", "gpu_model", "match_gpu_name"]

GPU_MODELS: tuple[GpuModel, ...] = NVIDIA_GPUS + AMD_GPUS

_BY_KEY = {model.key.lower(): model for model in GPU_MODELS}


def gpu_model(key: str) -> GpuModel:
    """The table entry for a short key such as "H100-80GB" (case-insensitive); KeyError when unknown."""
    return _BY_KEY[key.lower()]


def match_gpu_name(name: str) -> GpuModel | None:
    """The table entry whose pattern matches a device name (NVML or AMD SMI), or None for a model we do not list."""
    return next((m for m in GPU_MODELS if re.search(m.pattern, name, re.IGNORECASE)), None)


def find_gpu(key_or_name: str | None) -> GpuModel | None:
    """The table entry a --system key ("H100-80GB") or a device's name ("NVIDIA H100 80GB HBM3") names; None when
    neither is listed."""
    if not key_or_name:
        return None
    return _BY_KEY.get(key_or_name.lower()) or match_gpu_name(key_or_name)
