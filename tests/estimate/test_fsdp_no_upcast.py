"""FSDP outside accelerate (`--no-fsdp-upcast`): a plain torch loop wraps the bf16 model as loaded, so its shards,
gradients and AdamW states stay bf16, where accelerate upcasts the model to fp32 before wrapping it
(states.py `as_the_engine_trains`). The torch fact is read off a real FSDP2 model on the CPU; the estimate's
states are checked by hand for Llama-2-70B on 8 GPUs, through the command line a user types."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from tests.estimate.one_rank_fsdp import one_rank_fsdp, tiny_llama

LLAMA2_70B = 68_976_648_192
ARGV = ["estimate", "--model", "llama-2-70b", "--system", "8xA100-80GB", "--strategy", "fsdp", "--fsdp-version", "1",
        "--precision", "bf16", "--micro-batch", "1", "--seq-len", "2048", "--gradient-checkpointing"]


def test_a_plain_fsdp2_loop_keeps_bf16_shards_gradients_and_adamw_states(monkeypatch):
    torch = pytest.importorskip("torch")
    with one_rank_fsdp(monkeypatch) as fsdp:
        model = tiny_llama(torch.bfloat16)
        for layer in model.model.layers:
            fsdp.fully_shard(layer)  # no MixedPrecisionPolicy: llama-recipes' mixed_precision=None
        fsdp.fully_shard(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
        tokens = torch.randint(0, 128, (1, 8))
        model(input_ids=tokens, labels=tokens).loss.backward()
        optimizer.step()
        assert {p.dtype for p in model.parameters()} == {p.grad.dtype for p in model.parameters()} == {torch.bfloat16}
        states = {v.dtype for s in optimizer.state.values() for k, v in s.items() if k in ("exp_avg", "exp_avg_sq")}
        assert states == {torch.bfloat16}


def _sizes(*extra: str) -> dict:
    result = CliRunner().invoke(app, [*ARGV, "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["estimate"]["per_gpu_bytes"]


def test_the_estimate_keeps_bf16_states_without_the_upcast():
    upcast, plain = _sizes(), _sizes("--no-fsdp-upcast")
    shard = LLAMA2_70B / 8
    assert upcast["weights"] == pytest.approx(4 * shard, rel=1e-3)  # accelerate: fp32 shards, gradients, m and v
    assert upcast["optimizer_states"] == pytest.approx(8 * shard, rel=1e-3)
    assert plain["weights"] == pytest.approx(2 * shard, rel=1e-3)
    assert plain["gradients"] == pytest.approx(2 * shard, rel=1e-3)
    assert plain["optimizer_states"] == pytest.approx(4 * shard, rel=1e-3)


@pytest.mark.parametrize("extra", [["--strategy", "zero3"], ["--config", "accelerate.yaml"]])
def test_no_upcast_is_refused_where_fsdp_does_not_run_outside_accelerate(tmp_path, monkeypatch, extra):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text("distributed_type: FSDP\nnum_processes: 8\n")
    argv = [a for a in ARGV if a not in ("--strategy", "fsdp")] if extra[0] == "--strategy" else ARGV[:1] + ARGV[3:]
    result = CliRunner().invoke(app, [*argv, *extra, "--no-fsdp-upcast"])
    assert result.exit_code == 2 and "--no-fsdp-upcast" in result.output and "Traceback" not in result.output
