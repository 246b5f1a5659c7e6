"""GRPO with Liger's loss (TRL 0.17-1.12, `--loss-kernel liger --stack trl==VERSION`): the two LM-head-sized
tensors at the forward's end in segments of their own beside loading's reserve (estimate/liger_grpo.py), and HF
generate's cache stream as the replay takes it (grpo_generation.kv_cache_stream), against the real objects."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from accelwiz.estimate.grpo_generation import kv_cache_stream
from accelwiz.estimate.liger_grpo import SEGMENT
from accelwiz.modelspec.lookup import resolve_model

QWEN = resolve_model("qwen2-7b")
BASE = ["estimate", "--model", "qwen2-7b", "--system", "1xT4", "--strategy", "single", "--kind", "grpo", "--qlora",
        "--lora-rank", "32", "--base-dtype", "fp16", "--gradient-checkpointing", "--micro-batch", "8",
        "--max-prompt-length", "256", "--max-completion-length", "256", "--generation", "hf",
        "--stack", "transformers==4.57.3", "--format", "json"]


def _estimate(cli, *more: str) -> dict:
    result = cli(*BASE, *more)
    # 1 is the documented "does not fit" (a prepared fp32 head on a T4's 14.6 GiB CUDA total): the bytes are
    # what this file tests, not the verdict
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["estimate"]


@pytest.mark.parametrize(("prepare", "width"), [("--no-kbit-prepare", 2), ("--kbit-prepare", 4)])
def test_liger_adds_two_head_sized_segments_beside_loading(cli, prepare, width) -> None:
    fused = _estimate(cli, prepare, "--stack", "trl==0.26.2")
    liger = _estimate(cli, prepare, "--stack", "trl==0.26.2", "--loss-kernel", "liger")
    head = QWEN.vocab_size * QWEN.hidden_size * width  # zeros_like(lm_head.weight): fp16, or fp32 once prepared
    forward = fused["phases"]["forward"]
    # the loss moment: the forward's tensors (without the fused head's tile) plus both head tensors and a chunk
    assert liger["phases"]["loss"] >= forward - fused["sizes"]["temporaries"] + 2 * head
    assert liger["peak"]["phase"]["reserved"] == "loss"
    # each head-sized tensor takes a segment of its own, kept: above loading's allocated peak by both
    segments = 2 * -(-head // SEGMENT) * SEGMENT
    assert liger["peak"]["reserved"] >= fused["phases"]["loading"] + segments
    # a head above the fused run's allocated peak, backward's recomputed layer (on a T4 its SDPA falls back to the
    # math kernel, fp16 enable_gqa before sm80, and keeps fp32 probabilities: attention_backend.py), which the
    # fused run's reserve exceeds by less than a head
    assert liger["peak"]["reserved"] > fused["phases"]["backward"] + head
    assert any("LigerFusedLinearGRPOLoss" in note for note in liger["assumptions"])


@pytest.mark.parametrize("stack", [[], ["--stack", "trl==1.16.0"], ["--stack", "trl==1.13.0"],
                                   ["--stack", "trl==0.16.0"]])
def test_liger_grpo_is_refused_where_trl_runs_no_liger_grpo_loss(cli, stack) -> None:
    result = cli(*BASE, *stack, "--loss-kernel", "liger")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--stack trl==VERSION, TRL 0.17 to before 1.13" in result.output


def test_liger_is_still_refused_for_dpo(cli) -> None:
    result = cli("estimate", "--model", "qwen2-7b", "--kind", "dpo", "--qlora", "--stack", "trl==0.26.2",
                 "--loss-kernel", "liger")
    assert result.exit_code == 2 and "DPOTrainer" in result.output


def test_kv_cache_stream_is_dynamic_caches_cat_of_a_real_generate() -> None:
    """A tiny Qwen2 generating on the CPU: the tensors DynamicCache's `torch.cat(..., dim=-2)` makes, in order, are
    the stream the replay allocates (installed transformers; the rotary's cats run on the last dimension)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2)
    made: list[int] = []

    class Cats(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            dim = (kwargs or {}).get("dim", args[1] if len(args) > 1 else 0)
            if func is torch.ops.aten.cat.default and out.dim() == 4 and dim in (-2, 2):
                made.append(out.numel() * out.element_size())
            return out

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).eval()
    prompt, new = 5, 4
    with torch.no_grad(), Cats():
        model.generate(torch.randint(1, 64, (3, prompt)), max_new_tokens=new, min_new_tokens=new,
                       do_sample=False, pad_token_id=0)
    spec = replace(QWEN, num_layers=3, num_heads=4, num_kv_heads=2, head_dim=8)  # what the stream reads
    assert made == list(kv_cache_stream(spec, 3, prompt, new, width=4))
