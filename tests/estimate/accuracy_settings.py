"""benchmarks/estimator_accuracy.py's settings as internal objects, for tests only: the script itself runs every
setting through the command a user types (`estimate_argv`, `trace_argv`); tests build the same workload and
strategy directly to check that argv's mapping (test_accuracy_argv.py) and to feed mechanism checks on the
settings' recorded GPU streams (test_small_pool.py, test_gpu_step.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from accelwiz.estimate.resolved import workload_from_options
from accelwiz.estimate.strategy import Strategy, strategy_from_options
from accelwiz.estimate.workload import Workload

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from estimator_accuracy import MODEL_ARGUMENTS, Setting  # noqa: E402


def internal_strategy(setting: Setting) -> Strategy:
    """The strategy `estimate_argv` asks for, built directly."""
    if setting.strategy == "zero3_offload":
        return strategy_from_options("zero3", gpus_per_node=1, nodes=1, offload_optimizer="cpu")
    if setting.strategy.startswith("fsdp"):
        return strategy_from_options("fsdp_full", gpus_per_node=1, nodes=1, fsdp_version=int(setting.strategy[-1]))
    return strategy_from_options(setting.strategy, gpus_per_node=1, nodes=1)


def internal_workload(setting: Setting) -> Workload:
    """The workload `estimate_argv` asks for, built directly."""
    lora = {"regime": "lora", "lora_dropout": 0.0} if setting.regime == "lora" else {}
    return workload_from_options(model=MODEL_ARGUMENTS[setting.model], micro_batch=setting.micro_batch,
                                 seq_len=setting.seq_len, gradient_checkpointing=setting.gradient_checkpointing,
                                 attention=setting.attention, **lora)
