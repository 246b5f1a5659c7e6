"""`--method` is one flag in every command that takes a workload (init, run, check, estimate); --lora and --qlora
are short for it in check and estimate, and two that name different methods are refused in one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app

runner = CliRunner()


def _estimate(*flags: str):
    return runner.invoke(app, ["estimate", "--model", "llama-3.2-1b", "--gpu-memory", "24GiB", "--format", "json",
                               *flags])


@pytest.mark.parametrize(("long", "short"), [(["--method", "lora"], ["--lora"]),
                                             (["--method", "qlora"], ["--qlora"]),
                                             (["--method", "full"], [])])
def test_estimate_method_and_its_shorthand_estimate_the_same(long, short):
    by_method, by_short = _estimate(*long), _estimate(*short)
    assert by_method.exit_code == by_short.exit_code
    assert json.loads(by_method.stdout) == json.loads(by_short.stdout)


@pytest.mark.parametrize("flags", [["--method", "lora", "--qlora"], ["--lora", "--qlora"],
                                   ["--method", "full", "--lora"]])
def test_two_methods_are_refused_in_one_line(flags):
    result = _estimate(*flags)
    assert result.exit_code == 2
    assert "name two methods" in result.stderr and "Traceback" not in result.output


def test_an_unknown_method_names_the_valid_ones():
    result = _estimate("--method", "lorax")
    assert result.exit_code == 2
    assert "--method lorax is not a method" in result.stderr and "full, lora or qlora" in result.stderr


def test_check_explain_names_the_flag_the_run_and_init_also_take(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "--model", "tiny", "--defaults"]).exit_code == 0
    for flags in (["--method", "qlora"], ["--qlora"]):
        result = runner.invoke(app, ["check", "--explain", *flags])
        row = next(line for line in result.output.splitlines() if line.strip().startswith("fine_tuning_method"))
        assert "qlora" in row and "--method" in row, row
