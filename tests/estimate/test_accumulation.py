"""Gradient accumulation keeps gradients live across micro-batches (estimate/accumulation.py).

The two library facts the estimate rests on are read off real objects on the CPU: the HF Trainer sets gradients
to None only after the optimizer step (so a later micro-batch's forward runs with them), and FSDP2 without
gradient sync keeps each parameter's unsharded gradient instead of reduce-scattering it. The estimate's part is
then checked by hand for Llama-2-7B, through the command line a user types.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import resolve_model
from tests.estimate.one_rank_fsdp import one_rank_fsdp, tiny_llama

LLAMA2_7B = 6_738_415_616


def test_the_trainer_runs_later_micro_batches_with_the_gradients_live(tmp_path):
    """transformers' Trainer with gradient_accumulation_steps=2: forward of micro-batches 1 and 3 sees no
    gradient (the step set them to None), forward of 2 and 4 sees the gradients of the one before."""
    pytest.importorskip("torch")
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    model = tiny_llama()
    seen: list[bool] = []
    model.model.register_forward_pre_hook(lambda module, args: seen.append(
        any(p.grad is not None for p in model.parameters())))
    rows = Dataset.from_dict({"input_ids": [[1, 2, 3, 4, 5, 6, 7, 8]] * 4, "labels": [[1, 2, 3, 4, 5, 6, 7, 8]] * 4})
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=1, gradient_accumulation_steps=2,
                             max_steps=2, report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no")
    Trainer(model=model, args=args, train_dataset=rows).train()
    assert seen == [False, True, False, True]


def test_fsdp2_without_gradient_sync_keeps_the_unsharded_gradient(monkeypatch):
    """accelerate's no_sync under FSDP2 is `set_requires_gradient_sync(False)`: backward then leaves each
    parameter's gradient unsharded on the FSDPParam (in the 16-bit param dtype: accelerate's policy sets
    reduce_dtype to it) and the sharded parameter without one; with sync, the sharded gradient is all there is."""
    torch = pytest.importorskip("torch")
    with one_rank_fsdp(monkeypatch) as fsdp:
        model = tiny_llama()
        policy = fsdp.MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)
        for layer in model.model.layers:
            fsdp.fully_shard(layer, mp_policy=policy)
        fsdp.fully_shard(model, mp_policy=policy)
        params = model.model.layers[0]._get_fsdp_state()._fsdp_param_group.fsdp_params
        tokens = torch.randint(0, 128, (1, 8))

        model.set_requires_gradient_sync(False)
        model(input_ids=tokens, labels=tokens).loss.backward()
        kept = [p._unsharded_param.grad for p in params]
        assert all(g is not None and g.dtype == torch.bfloat16 for g in kept)
        assert all(p.sharded_param.grad is None for p in params)

        model.set_requires_gradient_sync(True)
        model(input_ids=tokens, labels=tokens).loss.backward()
        assert all(p.sharded_param.grad is not None for p in params)
        assert all(p._unsharded_param.grad is None for p in params)


def _forward_gradients(workload: Workload, strategy: Strategy) -> float:
    estimate = estimate_memory(workload, strategy)
    return dict(dict(estimate.moments)["forward"])["gradients"]


def test_ddp_forward_holds_the_step_gradients_and_fsdp_the_unsharded_16bit_ones():
    spec = resolve_model("llama-2-7b")
    assert spec.num_parameters == LLAMA2_7B
    ddp, fsdp = Strategy("ddp", gpus_per_node=8), Strategy("fsdp_full", gpus_per_node=8, fsdp_version=2)
    once = Workload(spec, precision="mixed", gradient_checkpointing=True)
    four = Workload(spec, precision="mixed", gradient_checkpointing=True, gradient_accumulation=4)
    assert _forward_gradients(once, ddp) == 0 and _forward_gradients(once, fsdp) == 0
    # DDP under autocast: fp32 gradients of every parameter, as the step holds them
    assert _forward_gradients(four, ddp) == pytest.approx(4 * LLAMA2_7B, abs=2)
    # FSDP: the whole model's unsharded bf16 gradient, not the eighth of an fp32 shard the step holds
    assert _forward_gradients(four, fsdp) == pytest.approx(2 * LLAMA2_7B, abs=2)
    assert estimate_memory(four, fsdp).gradients == pytest.approx(4 * LLAMA2_7B / 8, abs=2)
    # ZeRO-3 keeps its partition whatever the accumulation; offloaded gradients are not on the GPU
    zero3 = Strategy("zero3", gpus_per_node=8)
    assert _forward_gradients(four, zero3) == _forward_gradients(once, zero3)
    offloaded = Strategy("zero2", gpus_per_node=8, offload_optimizer="cpu")
    assert _forward_gradients(four, offloaded) == 0


def _estimate_json(*flags: str) -> dict:
    argv = ["estimate", "--model", "llama-2-7b", "--system", "8xA100-80GB", "--strategy", "fsdp", "--micro-batch",
            "1", "--seq-len", "2048", "--gradient-checkpointing", "--format", "json", *flags]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_the_flag_reaches_the_estimate_and_says_why():
    once, twice = _estimate_json(), _estimate_json("--gradient-accumulation", "2")
    assert (once["workload"]["gradient_accumulation"], twice["workload"]["gradient_accumulation"]) == (1, 2)
    grown = twice["estimate"]["phases"]["forward"] - once["estimate"]["phases"]["forward"]
    assert grown == pytest.approx(2 * LLAMA2_7B, abs=4)  # the unsharded bf16 gradient joins forward
    assert any("accelerate's no_sync" in a and "gradient accumulation x2" in a
               for a in twice["estimate"]["assumptions"])


def test_fsdp_reserves_the_unsharded_gradients_at_their_size_beside_its_stream_pools():
    """The unsharded gradients are allocated once per step at each unit's size and kept (static blocks): the
    reserve beyond them is FSDP's own streams and the default stream's churn, as without accumulation."""
    spec = resolve_model("llama-2-7b")
    fsdp = Strategy("fsdp_full", gpus_per_node=8, fsdp_version=1)
    once = estimate_memory(Workload(spec, gradient_checkpointing=True), fsdp)
    twice = estimate_memory(Workload(spec, gradient_checkpointing=True, gradient_accumulation=2), fsdp)
    assert (once.peak_phase, twice.peak_phase) == ("optimizer", "backward")  # the unsharded gradients' turn
    assert twice.reserved - twice.allocated >= 0.8 * (once.reserved - once.allocated) > 0
