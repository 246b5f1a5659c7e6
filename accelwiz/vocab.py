"""The shared vocabulary: units, distributed-type sets and the memory headroom, defined once.

No imports of pydantic or the config models here: the probe, the estimator and the wizard all use these, and
`accelwiz check` must start fast. `tests/test_effective.py` keeps the type sets equal to the schema's list.
"""

from __future__ import annotations

GIB = 1024**3

# Every `distributed_type` accelerate 1.15 knows (`accelerate.utils.DistributedType`), as the schema lists them.
MULTI_DEVICE_TYPES = frozenset({"MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_XPU",
                                "MULTI_HPU", "MULTI_NEURON"})
"""Types for which `accelerate launch` sets `--multi_gpu` (one process per device, through torchrun): every
MULTI_<device> type except MULTI_CPU (commands/launch.py, `_validate_launch_command`)."""

GPU_DISTRIBUTED = frozenset({"MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM"})
"""Types that imply CUDA devices. `NO` is one process on GPU 0 when there is one, on the CPU otherwise."""

PER_DEVICE_TYPES = MULTI_DEVICE_TYPES | {"FSDP", "DEEPSPEED", "MEGATRON_LM"}
"""Types whose launcher starts one process per device on each machine."""

SIMPLE_LAUNCHER_TYPES = frozenset({"NO", "MULTI_CPU"})
"""Types run by the simple launcher: one process, or mpirun when a hostfile is given."""

HEADROOM = 0.9
"""The share of GPU memory (and host RAM) a plan may use: 10% is kept for fragmentation spikes and workspaces."""

SHARDING_STRATEGIES = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2")
"""FSDP1 sharding strategies in accelerate's order (`FSDP_SHARDING_STRATEGY`): strategy N is the N-th name."""
