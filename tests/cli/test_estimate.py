"""`accelwiz estimate` end to end, in-process."""

from __future__ import annotations

import json

import pytest

from accelwiz.errors import UsageError
from accelwiz.estimate.sizes import parse_size


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80GiB", 80 * 2**30),
        ("80GB", 80 * 10**9),
        ("81920MiB", 80 * 2**30),
        ("80 gib", 80 * 2**30),
        ("1.5TiB", int(1.5 * 2**40)),
    ],
)
def test_parse_size(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["80 bananas", "GiB", "-1GB", "0GB", ""])
def test_parse_size_rejects(text):
    with pytest.raises(UsageError):
        parse_size(text)


def test_text_breakdown_verdict_and_recommendation(cli):
    result = cli(
        "estimate",
        "--model",
        "llama-8b",
        "--gpus",
        "8",
        "--gpu-memory",
        "80GiB",
        "--micro-batch",
        "4",
        "--seq-len",
        "4096",
        "--gradient-checkpointing",
    )
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for row in (
        "weights",
        "gradients",
        "optimizer states",
        "activations",
        "logits",
        "comm. buffers",
        "total",
        "per node host RAM",
        "assumptions:",
    ):
        assert row in out
    assert "fits: " in out and "recommendation: ZeRO-1: " in out and "largest micro-batch that fits" in out


def test_explicit_strategy_that_does_not_fit(cli):
    result = cli(
        "estimate",
        "--model",
        "llama-8b",
        "--gpus",
        "8",
        "--gpu-memory",
        "80GB",
        "--strategy",
        "ddp",
        "--micro-batch",
        "4",
        "--seq-len",
        "4096",
    )
    assert result.exit_code == 1  # does not fit: exit 1, as `check` does for errors
    assert "DDP on 8 GPU(s)" in result.stdout and "does not fit: " in result.stdout


def test_json_and_compare(cli):
    result = cli(
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "4",
        "--gpu-memory",
        "81920MiB",
        "--lora",
        "--compare",
        "--format",
        "json",
    )
    data = json.loads(result.stdout)
    assert data["model"]["parameters"] == 7_615_616_512
    assert data["workload"]["regime"] == "lora" and data["workload"]["trainable_parameters"] > 0
    per_gpu = data["estimate"]["per_gpu_bytes"]
    assert per_gpu["total"] == sum(v for k, v in per_gpu.items() if k != "total")
    assert len(data["compare"]) >= 10 and all(isinstance(row["fits"], bool) for row in data["compare"])
    assert data["recommendation"]["strategy"] == "DDP"


def test_compare_table(cli):
    result = cli(
        "estimate",
        "--model",
        "llama-3.1-405b",
        "--gpus",
        "8",
        "--nodes",
        "4",
        "--gpu-memory",
        "80GiB",
        "--compare",
        "--gradient-checkpointing",
    )
    assert result.exit_code == 0
    assert "GiB per GPU by strategy" in result.stdout and "ZeRO-3 +CPU opt,param" in result.stdout


def test_system_preset(cli):
    result = cli("estimate", "--model", "gpt2", "--system", "8xH100-80GB")
    assert result.exit_code == 0, result.stderr
    assert "on 8 GPU(s)" in result.stdout and "H100" in result.stdout and "fits: " in result.stdout


def test_no_target_no_verdict(cli, pin_local):
    from tests.profiles import machine

    pin_local(machine())  # a machine without GPUs, on every machine: the local probe gives no target
    result = cli("estimate", "--params", "7e9", "--qlora", "--compare")
    assert result.exit_code == 0
    assert "no verdict" in result.stdout and "fits" in result.stdout  # the table's column header


def test_list_models(cli):
    result = cli("estimate", "--list-models")
    assert result.exit_code == 0 and "llama-3.1-8b" in result.stdout and "8,030,261,248" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one of --model and --params"),
        (("--model", "gpt2", "--params", "7e9"), "exactly one of"),
        (("--model", "lama-8b"), "unknown model"),
        (("--model", "gpt2", "--gpu-memory", "80 potatoes"), "cannot read size"),
        (("--model", "gpt2", "--optimizer", "lion", "--gpu-memory", "1GB"), "invalid optimizer"),
        (("--model", "gpt2", "--lora", "--qlora", "--gpu-memory", "1GB"), "name two methods"),
        (("--model", "gpt2", "--strategy", "zero9", "--gpu-memory", "1GB"), "unknown strategy"),
        # used to be an OverflowError traceback: float("1e400") is inf
        (("--params", "1e400"), "parameter count is too large"),
        # used to estimate silently with 0 trainable parameters
        (("--model", "llama-8b", "--lora", "--lora-target", "qproj"), "no such module in llama-3.1-8b"),
        (("--model", "gpt2", "--qlora", "--lora-target", "q_proj"), "no such module in gpt2"),
    ],
)
def test_bad_input_is_a_usage_error(cli, args, message):
    result = cli("estimate", *args)
    assert result.exit_code == 2
    assert message in result.stderr and "hint:" in result.stderr


@pytest.mark.parametrize("method", ["--qlora", "--lora"])
def test_params_scales_every_shape_count(cli, method):
    """`--params N` borrows a preset's shape and scales every count taken from it: at llama-2-70b's own count the
    weights are the preset's; at 65e9 they shrink by the same ratio (QLoRA's quantized linears were once taken
    unscaled from the 70B shape, leaving 65e9 QLoRA below a 33 GiB 4-bit base alone)."""
    def weights(*model):
        result = cli("estimate", *model, "--system", "1xRTX-A6000", method, "--seq-len", "512", "--format", "json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["estimate"]["per_gpu_bytes"]["weights"]

    preset = weights("--model", "llama-2-70b")
    same_count = json.loads(cli("estimate", "--model", "llama-2-70b", "--format", "json").stdout)["model"]["parameters"]
    assert weights("--params", str(same_count)) == pytest.approx(preset, rel=1e-6)
    assert weights("--params", "65e9") == pytest.approx(preset * 65e9 / same_count, rel=0.02)
