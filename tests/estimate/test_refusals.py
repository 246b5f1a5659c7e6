"""Combinations the stack refuses or silently replaces are refused with its reason, one error line and a hint,
exit 2 (issue 28, bad input), through the command a user types; what runs as asked is estimated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.config.training_args import parse_argv
from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.resolution.workload import resolve_workload

_BASE = ["estimate", "--model", "llama-2-7b", "--system", "2xA100-80GB", "--format", "json"]


def _run(*flags: str):
    return CliRunner().invoke(app, [*_BASE, *flags])


@pytest.mark.parametrize("optimizer", ["adamw8bit", "sgd", "adafactor"])
def test_deepspeed_optimizer_offload_with_another_optimizer_is_refused_naming_what_runs(optimizer: str) -> None:
    result = _run("--strategy", "zero2", "--offload-optimizer", "cpu", "--optimizer", optimizer)
    assert result.exit_code == 2, result.output
    assert f"--optimizer {optimizer}" in result.output and "DeepSpeedCPUAdam" in result.output
    assert "Traceback" not in result.output
    assert _run("--strategy", "zero2", "--optimizer", optimizer).exit_code in (0, 1)  # on the GPU it runs


def test_adamw_with_deepspeed_optimizer_offload_is_estimated() -> None:
    result = _run("--strategy", "zero3", "--offload-optimizer", "cpu", "--offload-param", "cpu")
    assert result.exit_code in (0, 1) and json.loads(result.stdout)["estimate"]["peak"]["total"] > 0


def test_fsdp_optimizer_only_offload_is_refused_not_made_a_parameter_offload() -> None:
    result = _run("--strategy", "fsdp_full", "--offload-optimizer", "cpu")
    assert result.exit_code == 2 and "fsdp_offload_params" in result.output, result.output
    assert _run("--strategy", "fsdp_full", "--offload-optimizer", "cpu", "--offload-param", "cpu").exit_code in (0, 1)


def test_a_deepspeed_json_optimizer_replaces_the_trainers_optim() -> None:
    """DeepSpeed builds the JSON's optimizer (its CPUAdam under offload) whatever the Trainer's --optim says: the
    workload says adamw, so the offload is not refused."""
    text = json.dumps({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
                       "bf16": {"enabled": True}, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}})
    effective = resolve(None, parse_text(text, Path("ds.json"), kind="deepspeed"))
    optimizer = resolve_workload(effective=effective, trainer_args=parse_argv(["--optim", "adamw_bnb_8bit"])).optimizer
    assert (optimizer.value, optimizer.source) == ("adamw", "deepspeed json")
