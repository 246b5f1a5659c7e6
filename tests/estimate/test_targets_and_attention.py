"""LoRA targets outside the blocks count, an unknown target is refused by name, and an attention
implementation transformers refuses for a model is refused with its reason."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.workload import check_lora_targets, default_attention
from accelwiz.estimate.resolved import workload_from_options


def _lora(model: str, *targets: str, rank: int = 16):
    return workload_from_options(model=model, micro_batch=1, seq_len=512, regime="lora", lora_rank=rank,
                                 lora_targets=targets)


def test_lm_head_and_the_embedding_are_adaptable_as_peft_wraps_them() -> None:
    spec = resolve_model("llama-3.1-8b")
    q_only = _lora("llama-3.1-8b", "q_proj").trainable_parameters
    assert q_only == spec.num_layers * 16 * (4096 + 4096)
    # PEFT: lm_head is a Linear(hidden -> vocab): A r x hidden, B vocab x r; the embedding: A r x vocab, B hidden x r
    assert _lora("llama-3.1-8b", "q_proj", "lm_head").trainable_parameters == q_only + 16 * (4096 + 128256)
    assert _lora("llama-3.1-8b", "embed_tokens").trainable_parameters == 16 * (128256 + 4096)


def test_peft_counts_lm_head_like_this(tmp_path) -> None:
    """The real PEFT on a tiny Llama: lm_head among the targets adds r x (hidden + vocab)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    peft = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "lm_head"]))
    trainable = sum(p.numel() for p in peft.parameters() if p.requires_grad)
    assert trainable == 2 * 4 * (64 + 64) + 4 * (64 + 1000)


def test_an_unknown_target_beside_valid_ones_is_refused_by_name(cli) -> None:
    with pytest.raises(UsageError, match=r"--lora-target qproj: no such module in llama-3.1-8b") as caught:
        check_lora_targets(resolve_model("llama-3.1-8b"), ["q_proj", "qproj"])
    assert "q_proj, k_proj" in caught.value.hint
    result = cli("estimate", "--model", "llama-3.1-8b", "--lora", "--lora-target", "q_proj", "--lora-target", "qproj")
    assert result.exit_code == 2 and "qproj: no such module" in result.stderr


def test_all_linear_with_lm_head_is_not_refused() -> None:
    workload = _lora("llama-3.1-8b", "all-linear", "lm_head")
    assert workload.trainable_parameters > _lora("llama-3.1-8b", "all-linear").trainable_parameters


def test_gemma2_defaults_to_eager_and_refuses_sdpa_with_the_reason(cli) -> None:
    assert default_attention(resolve_model("gemma-2-9b")) == "eager"
    assert default_attention(resolve_model("llama-3.1-8b")) == "sdpa"
    assert "eager attention" in cli("estimate", "--model", "gemma-2-9b", "--gpu-memory", "80GiB").stdout
    result = cli("estimate", "--model", "gemma-2-9b", "--attention", "sdpa", "--gpu-memory", "80GiB")
    assert result.exit_code == 2
    assert "soft-capping" in result.stderr and "_supports_sdpa = False" in result.stderr
    assert cli("estimate", "--model", "gemma-2-9b", "--attention", "flash", "--gpu-memory", "80GiB").exit_code == 0


def test_transformers_itself_refuses_sdpa_for_gemma2() -> None:
    """What the refusal mirrors: transformers' own check, on a tiny Gemma-2 built on the meta device."""
    import torch
    from transformers import Gemma2Config, Gemma2ForCausalLM

    config = Gemma2Config(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                          num_attention_heads=2, num_key_value_heads=1, head_dim=16)
    with torch.device("meta"), pytest.raises(ValueError, match="scaled_dot_product_attention"):
        Gemma2ForCausalLM._from_config(config, attn_implementation="sdpa")
