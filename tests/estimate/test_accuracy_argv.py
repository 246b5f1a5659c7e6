"""benchmarks/estimator_accuracy.py (the GPU script) estimates and traces each setting through the command a user
types (issue 28): every setting's argv parses into the setting's workload and strategy (built here from internal
objects only to check the argv's mapping), and the trace column is `accelwiz estimate ... --trace --format json`,
the same traced figures as the trace the script used to build itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from accelwiz.estimate.memory import estimate_memory
from tests.estimate.accuracy_settings import internal_strategy, internal_workload

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from estimator_accuracy import (  # noqa: E402
    estimate_argv,
    matrix,
    run_estimate,
    trace_argv,
    trace_figures,
)

SETTINGS = matrix()


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.label for s in SETTINGS])
def test_each_settings_argv_is_the_settings_workload(setting) -> None:
    argv = estimate_argv(setting)
    assert argv[0] == "estimate" and argv[-2:] == ["--format", "json"]
    shown = run_estimate(argv)
    workload, strategy = internal_workload(setting), internal_strategy(setting)
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


def test_the_trace_argv_is_the_estimate_argv_with_trace() -> None:
    setting = SETTINGS[0]
    assert trace_argv(setting) == [*estimate_argv(setting)[:-2], "--trace", "--format", "json"]
    assert trace_argv(setting, 4)[-5:] == ["--trace", "--layers", "4", "--format", "json"]


def test_the_trace_column_is_the_commands_trace_and_equals_the_internal_trace() -> None:
    """The smallest setting (llama-small, 12 layers): the command's traced peak and replayed reserve are the
    bytes the script's former internal trace (every layer, no time cap) gave."""
    from accelwiz.estimate.trace import trace_workload
    from accelwiz.estimate.trace_compare import compare

    setting = SETTINGS[0]
    figures = trace_figures(setting)
    workload, strategy = internal_workload(setting), internal_strategy(setting)
    internal = compare(estimate_memory(workload, strategy),
                       trace_workload(workload, strategy=strategy, time_limit=1e9))
    assert figures["trace_layers"] == workload.model.num_layers  # traced whole, within the CLI's cap
    assert (figures["trace_allocated"], figures["trace_reserved"], figures["trace_phase"]) == (
        internal.traced["peak"], internal.traced["reserved"], internal.traced_phase)
    assert figures["trace_argv"] == " ".join(trace_argv(setting))


def test_a_layers_trace_runs_as_the_command_scales_it() -> None:
    figures = trace_figures(SETTINGS[0], layers=4)
    assert figures["trace_layers"] == 4 and "--layers 4" in figures["trace_argv"]
    whole = trace_figures(SETTINGS[0])["trace_allocated"]
    assert figures["trace_allocated"] == pytest.approx(whole, rel=0.05)  # linear in depth: close, not equal
