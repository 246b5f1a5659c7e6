"""The shared vocabulary: units, distributed-type sets and the memory headroom, defined once.

No imports of pydantic or the config models here: the probe, the estimator and the wizard all use these, and
`accelwiz check` must start fast. `tests/test_effective.py` keeps the type sets equal to the schema's list.
"""

from __future__ import annotations

from typing import Literal, get_args

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

# The domain's words, defined once (issue 30, item 4). Each name below replaces a table that was written in
# several modules; tests/test_vocab.py keeps the copies that remain in other packages equal to these.

TRAINING_KINDS = ("sft", "dpo", "grpo")
"""What a run trains: sft (the built-in loop), dpo (preference pairs) or grpo (generations scored by rewards), as
the plan's `post_training.kind`, the trainer's --kind and the resolution spell it."""

TRL_KINDS = TRAINING_KINDS[1:]
"""The kinds TRL's trainers run (trainer/trl_run.py); sft is accelwiz's own loop."""

PLAN_PRECISION_OF_MIXED = {"no": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8"}
"""accelerate's `mixed_precision` (the YAML's and --mixed_precision's spelling) -> the plan's `training.precision`.
Only "no" is spelled differently: the plan says what the weights compute in (fp32), accelerate what it adds."""

MIXED_PRECISION_OF_PLAN = {plan: mixed for mixed, plan in PLAN_PRECISION_OF_MIXED.items()}
"""The plan's `training.precision` -> accelerate's `mixed_precision`: the inverse of PLAN_PRECISION_OF_MIXED."""

RENAMED_WORKLOAD_FIELDS = {"regime": "method"}
"""The estimator's old word -> the resolution's (and the plan's `fine_tuning.method`): check's --lora/--qlora still
reach the engine as "regime"; every reader renames with this one table."""

StrategyKind = Literal["single", "ddp", "zero1", "zero2", "zero3", "fsdp_full", "fsdp_grad_op", "fsdp_hybrid"]
"""How training is distributed, as the estimator costs it (`Strategy.kind`), `estimate --strategy` and
`init --strategy` take it, and an answer file's `strategy:` writes it."""

STRATEGY_KINDS: tuple[str, ...] = get_args(StrategyKind)

RENAMED_STRATEGIES = {"fsdp": "fsdp_full", "fsdp-grad-op": "fsdp_grad_op", "fsdp-hybrid": "fsdp_hybrid"}
"""The wizard's old strategy words -> the one vocabulary's: answer files written before the rename keep working,
with a deprecation note (wizard/aliases.py)."""

LauncherKind = Literal["local", "node-commands", "slurm"]
"""How a run is started: here (`accelwiz run`), by the commands `run --print-node-commands` prints for each
machine, or by the sbatch script `run --slurm` writes; the plan's `launcher.kind` and the wizard's `launcher`."""

LAUNCHER_KINDS: tuple[str, ...] = get_args(LauncherKind)

RENAMED_LAUNCHERS = {"per-node": "node-commands"}
"""The wizard's old launcher word -> the one vocabulary's, for answer files and plans written by hand."""

Verdict = Literal["fits", "tight", "does not fit"]
"""The one verdict on a need against a capacity (estimate/verdict.py judges it; the plan stores it)."""
