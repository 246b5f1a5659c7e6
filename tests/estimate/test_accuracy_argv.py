"""benchmarks/estimator_accuracy.py (the GPU script) estimates each setting through the command a user types
(issue 28): every setting's argv parses, and the CLI's workload and strategy are the ones the script built from
internal objects before (and its trace still builds), so the H200 rows keep comparing the same estimate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from accelwiz.estimate.memory import estimate_memory

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from estimator_accuracy import (  # noqa: E402
    accelwiz_strategy,
    accelwiz_workload,
    estimate_argv,
    matrix,
    run_estimate,
)

SETTINGS = matrix()


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.label for s in SETTINGS])
def test_each_settings_argv_is_the_workload_the_script_built(setting) -> None:
    argv = estimate_argv(setting)
    assert argv[0] == "estimate" and argv[-2:] == ["--format", "json"]
    shown = run_estimate(argv)
    workload, strategy = accelwiz_workload(setting), accelwiz_strategy(setting)
    cli_workload = shown["workload"]
    assert {key: cli_workload[key] for key in ("micro_batch", "seq_len", "regime", "precision", "optimizer",
                                               "gradient_checkpointing", "attention", "trainable_parameters")} == {
        "micro_batch": workload.micro_batch, "seq_len": workload.seq_len, "regime": workload.regime,
        "precision": workload.precision, "optimizer": workload.optimizer,
        "gradient_checkpointing": workload.gradient_checkpointing, "attention": workload.attention,
        "trainable_parameters": workload.trainable_parameters}
    assert shown["model"]["parameters"] == workload.model.num_parameters
    cli_strategy = shown["estimate"]["strategy"]
    assert (cli_strategy["label"], cli_strategy["gpus_per_node"]) == (strategy.label, 1)
    internal = estimate_memory(workload, strategy)
    assert (shown["estimate"]["peak"]["allocated"], shown["estimate"]["peak"]["reserved"]) == (
        internal.allocated, internal.reserved)
