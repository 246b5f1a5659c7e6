"""estimate --kind dpo|grpo: the "at peak" column is what is live at the peak's moment (issue 28).

Each moment of the combined estimate is a moment of the training step (its own parts, `MemoryEstimate.moments`)
plus what TRL adds at it; the parts at the peak are checked here against figures computed apart from it: the
training step's states and activations, the reference model, the fused head's tile and kept floats (the same
trl_fused_head.py accounting as SFT's, over the completion positions), the log-prob pass's tile, the KV cache and
vLLM's share. DPO and GRPO, LoRA and full, with and without a reference model.
"""

from __future__ import annotations

import json

import pytest

from accelwiz.estimate.activations import loss_transient_bytes, recompute_bytes
from accelwiz.estimate.posttraining import PostTraining, estimate_posttraining, reference_bytes, training_workload
from accelwiz.estimate.states import model_states, peft_fp32_adapters
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.step_phases import tied_embedding_gradients
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.trl_fused_head import fused_head_tile
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import resolve_model

GIB = 2**30
GPU = 80 * GIB

# (model, kind, regime, strategy, gradient checkpointing, micro-batch, TRL settings); the comment: the peak's
# moment on the tree that wrote this (the coverage test below keeps most moments reached)
SETTINGS = [
    ("tiny", "dpo", "full", "single", False, 1, {}),  # forward; a whole fp32 reference
    ("tiny", "dpo", "full", "zero1", False, 1, {}),  # backward start (ZeRO-1's reduce bucket); reference at stage 0
    ("llama-3.2-1b", "dpo", "full", "single", False, 1, {"precompute_ref_log_probs": True}),  # optimizer; no ref
    ("llama-3.2-1b", "dpo", "full", "zero3", True, 4, {}),  # recomputation; a sharded reference
    ("llama-3.2-1b", "dpo", "full", "fsdp_full", True, 1, {}),  # backward end; a sharded reference
    ("llama-3.2-1b", "dpo", "lora", "single", True, 1, {}),  # recomputation; no copy (adapter disabled)
    ("llama-3.2-1b", "dpo", "lora", "zero1", False, 4, {}),
    ("llama-3.2-1b", "grpo", "full", "zero3", True, 1, {}),  # generation (ZeRO-3 gathers); beta 0: no reference
    ("llama-3.2-1b", "grpo", "full", "zero3", True, 4, {"beta": 0.04, "generation": "vllm-colocate"}),  # logprob
    ("llama-3.2-1b", "grpo", "full", "zero1", False, 2, {"beta": 0.04}),  # a whole 16-bit reference
    ("llama-3.2-1b", "grpo", "lora", "single", True, 1, {}),  # logprob; no reference
    ("llama-3.2-1b", "grpo", "lora", "zero1", False, 2, {"beta": 0.04, "generation": "vllm-colocate"}),
    ("qwen2.5-7b", "grpo", "full", "fsdp_full", False, 4, {"beta": 0.04, "generation": "vllm-server"}),
]


def _estimate(model, kind, regime, strategy_kind, gc, micro_batch, settings):
    workload = Workload(resolve_model(model), micro_batch=micro_batch, seq_len=1024, regime=regime,
                        gradient_checkpointing=gc)
    strategy = Strategy(strategy_kind, gpus_per_node=1 if strategy_kind == "single" else 4)
    post = PostTraining(kind, **settings)
    return workload, strategy, post, estimate_posttraining(workload, strategy, post, GPU)


def _peak_moment(estimate) -> str:
    combined = estimate.combined
    return next(label for label, parts in combined.moments if dict(parts) == dict(combined.at_peak))


def _expected(workload, strategy, post, estimate, moment: str) -> dict[str, int]:
    """What is live at `moment`, from figures computed apart from the combined estimate (buffers: the training
    step's own at that moment, plus ZeRO-3's model gathered for generation)."""
    training, generation = estimate.training, estimate.generation
    step = training.workload
    ref = reference_bytes(workload, strategy, post)[0]
    share = generation.reserved_bytes if generation is not None else 0
    vllm_weights = min(generation.vllm.weights, share) if share else 0
    weights = training.weights + ref + vllm_weights
    resident = weights - model_states(step, strategy).autocast_copy  # autocast's copies are gone after backward
    kept = training.gradients if strategy.kind == "zero3" else 0  # ZeRO-3's flat partition stays between steps
    # the fused head over the completion positions (Triton): 16 bytes kept per position; in forward its tile and
    # casts, at backward's start backward's fp32 accumulators too (tests/estimate/test_trl_fused_head.py)
    autocast = step.precision == "mixed" and strategy.kind in ("single", "ddp")
    positions = step.micro_batch * post.max_completion_length
    head_forward, head_backward = loss_transient_bytes(step, autocast=autocast)
    assert head_forward >= fused_head_tile(positions, step.precision) and head_backward > head_forward
    live = {"weights": weights, "gradients": kept, "optimizer_states": training.optimizer_states,
            "activations": training.activations + share - vllm_weights, "logits": 16 * positions,
            "temporaries": head_backward if moment == "backward start" else head_forward}
    between = {**live, "activations": share - vllm_weights, "logits": 0}  # GRPO's passes between two steps
    training_moment = "forward" if moment in ("logprob", "generation") else moment
    buffers = dict(dict(training.moments)[training_moment])["buffers"]
    if moment == "backward recompute":
        live["logits"] = 0  # the loss's backward ran before the layers': nothing of the head is left
        live["temporaries"] = recompute_bytes(step, autocast=autocast, strategy=strategy,
                                              fp32_adapters=peft_fp32_adapters(step, strategy))
    elif moment in ("backward end", "optimizer"):
        temporaries = (tied_embedding_gradients(step, strategy) if moment == "backward end"
                       else optimizer_step_temporaries(step, strategy)[0])
        live = {**between, "weights": resident, "gradients": training.gradients, "temporaries": temporaries}
    elif moment == "logprob":  # one micro-batch through the same fused head (no grad): its tile and floats
        live = {**between, "temporaries": head_forward + 16 * positions}
    elif moment == "generation":
        live = {**between, "activations": between["activations"] + generation.kv_cache_bytes, "temporaries": 0}
        buffers += generation.gathered_bytes
    return {key: round(value) for key, value in {**live, "buffers": buffers}.items()}


@pytest.mark.parametrize("setting", SETTINGS, ids=["-".join(map(str, s[:6])) for s in SETTINGS])
def test_the_parts_at_the_peak_are_what_is_live_at_its_moment_and_sum_to_it(setting) -> None:
    workload, strategy, post, estimate = _estimate(*setting)
    combined = estimate.combined
    parts = dict(combined.at_peak)
    assert sum(parts.values()) == combined.allocated
    assert min(parts.values()) >= 0, parts
    moment = _peak_moment(estimate)
    assert parts == _expected(workload, strategy, post, estimate, moment), moment
    # the phase the report names is the peak moment's
    assert combined.peak_phase == moment.split()[0]


def test_the_settings_reach_the_peak_at_most_moments() -> None:
    moments = {_peak_moment(_estimate(*setting)[3]) for setting in SETTINGS}
    assert len(moments) >= 5, moments  # else the parametrized test above checks fewer mechanisms than it says


def test_an_untouched_moment_is_the_training_steps_own_attribution_plus_the_reference() -> None:
    """Where the peak is a moment the head does not run in (the optimizer step), the parts are estimate_memory's
    own at_peak, computed through memory.py's peak, with the reference model among the weights."""
    workload, strategy, post, estimate = _estimate("llama-3.2-1b", "dpo", "full", "zero1", True, 1, {})
    assert _peak_moment(estimate) == "optimizer"
    training = dict(estimate.training.at_peak)
    ref = reference_bytes(workload, strategy, post)[0]
    assert ref > 0 and training_workload(workload, post).micro_batch == 2
    assert dict(estimate.combined.at_peak) == {**training, "weights": training["weights"] + ref}


def test_a_backward_peak_before_the_gradients_exist_counts_none(cli) -> None:
    """docs/posttraining.md's DPO example under ZeRO-1 (what the recommendation picked before backward's fp32
    accumulators of the fused head were counted; now ZeRO-3): the peak is backward's start, before ZeRO-1's gradient
    partition exists, so no gradients are live and the activations are all those forward kept (was: the whole
    14.2 GiB of gradients and 10.3 of 25.3 GiB of activations, moved to fit the phase total)."""
    result = cli("estimate", "--model", "qwen2.5-7b", "--kind", "dpo", "--micro-batch", "2",
                 "--max-prompt-length", "512", "--max-completion-length", "512", "--system", "8xH100-80GB",
                 "--strategy", "zero1", "--format", "json")
    shown = json.loads(result.stdout)["estimate"]
    live, sizes = shown["per_gpu_bytes"], shown["sizes"]
    assert shown["strategy"]["kind"] == "zero1" and shown["peak_phase"] == "backward"
    assert live["gradients"] == 0 < sizes["gradients"]
    assert live["activations"] == sizes["activations"] > 0
    assert sum(v for k, v in live.items() if k != "total") == live["total"] == shown["peak"]["total"]


@pytest.mark.parametrize("flags", [
    ("--kind", "dpo", "--method", "lora"),
    ("--kind", "dpo", "--strategy", "zero3", "--gpus", "8"),
    ("--kind", "grpo", "--beta", "0.04", "--strategy", "zero2", "--gpus", "8"),
    ("--kind", "grpo", "--method", "lora", "--generation", "vllm-colocate", "--gpus", "8"),
])
def test_the_json_column_sums_to_the_total_through_the_command(cli, flags) -> None:
    result = cli("estimate", "--model", "llama-3.2-1b", "--gpu-memory", "80GiB", *flags, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    shown = json.loads(result.stdout)["estimate"]
    live = shown["per_gpu_bytes"]
    assert min(live.values()) >= 0, live
    assert sum(v for k, v in live.items() if k != "total") == live["total"] == shown["peak"]["total"]
    assert live["total"] - live["reserve"] - live["runtime"] == shown["peak"]["allocated"]
