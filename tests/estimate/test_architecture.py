"""Any model_type transformers knows: built on the meta device, read into a ModelSpec, bad input refused.

The counts asserted for the new families are checked two ways: against the model card's rounded figure, and
against the count written out from the config's own sizes (so a wrong reading of the built model fails here).
"""

from __future__ import annotations

import json

import pytest

from accelwiz.errors import InputError, UsageError
from accelwiz.modelspec.lookup import MODEL_PRESETS, resolve_model, spec_from_hf_config
from accelwiz.estimate.workload import Workload
from accelwiz.resolution.stack import Stack

pytest.importorskip("transformers")

# Qwen1.5-MoE-A2.7B's shape ("14.3B parameters, 2.7B activated"), written by hand as the issue did
QWEN2_MOE = {
    "model_type": "qwen2_moe",
    "vocab_size": 151936,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "num_experts": 60,
    "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632,
}
# DeepSeek-V2-Lite's shape ("15.7B total"): MLA attention, a dense first layer, 64 routed + 2 shared experts
DEEPSEEK_V2 = {
    "model_type": "deepseek_v2",
    "vocab_size": 102400,
    "hidden_size": 2048,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "n_shared_experts": 2,
    "n_routed_experts": 64,
    "num_experts_per_tok": 6,
    "first_k_dense_replace": 1,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}
# A Gemma-3 text model: 4 norms per block, per-head q/k norms, sliding-window layers, tied embeddings
GEMMA3_TEXT = {
    "model_type": "gemma3_text",
    "vocab_size": 262144,
    "hidden_size": 1152,
    "intermediate_size": 6912,
    "num_hidden_layers": 26,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "sliding_window": 512,
}


def _spec(config: dict, name: str = "test"):
    return spec_from_hf_config(config, name=name, source=f"{name}/config.json")


def test_qwen2_moe_builds_with_shared_experts():
    spec = _spec(QWEN2_MOE)
    h, f, e, shared, layers, vocab = 2048, 1408, 60, 5632, 24, 151936
    attention = 4 * h * h + 3 * h  # q, k, v, o (16 heads × 128 fill h) and the q/k/v biases
    moe = e * h + e * 3 * h * f + 3 * h * shared + h  # router, experts, shared expert, its gate
    assert spec.num_parameters == 2 * vocab * h + layers * (attention + moe + 2 * h) + h == 14_315_784_192
    assert (spec.num_experts, spec.experts_per_token) == (60, 4)
    assert (spec.intermediate_size, spec.shared_expert_intermediate_size) == (1408, 5632)
    # a token runs 4 of 60 routed experts and always the shared one: "2.7B activated"
    assert spec.active_parameters == spec.num_parameters - layers * (e - 4) * 3 * h * f
    assert round(spec.active_parameters / 1e9, 1) == 2.7
    # the shared expert has its term (activations.py); the routed experts' dispatch does not: approximate
    assert not spec.analytic_activations and "`qwen2_moe` has no term-by-term formula" in spec.activations_note
    assert "shared experts" not in spec.activations_note


def test_deepseek_v2_mla_and_mixed_blocks():
    spec = _spec(DEEPSEEK_V2)
    assert round(spec.num_parameters / 1e9, 1) == 15.7
    assert (spec.kv_lora_rank, spec.q_lora_rank, spec.qk_rope_head_dim, spec.v_head_dim) == (512, None, 64, 128)
    assert spec.shared_expert_intermediate_size == 2 * 1408 and spec.num_experts == 64
    assert "multi-head latent attention" in spec.activations_note
    # the dense first block differs from the MoE ones: counts use every block, not block 0 × 27
    dense, moe = (sum(t.numel for t in spec.tensors() if t.module.startswith(f"layers.{i}.")) for i in (0, 1))
    assert dense != moe and spec.layer_parameters == max(dense, moe)
    # default targets: PEFT's all-linear; before peft 0.20 it reached no fused expert and no router (peft_moe.py)
    workload = Workload(spec, regime="lora", lora_rank=8, stack=Stack(transformers=(5, 0, 0), peft=(0, 19, 1)))
    per_block_0 = sum(8 * sum(t.shape) for t in spec.block_linears())
    assert workload.trainable_parameters != 27 * per_block_0
    assert workload.trainable_parameters == sum(8 * sum(t.shape) for t in spec.all_block_linears())
    today = Workload(spec, regime="lora", lora_rank=8)  # and since: 26 MoE blocks' experts (2r, r) and routers
    routed = 26 * (2 * 8 * 64 * (2048 + 2 * 1408) + 8 * 64 * (1408 + 2048) + 8 * (2048 + 64))
    assert today.trainable_parameters - workload.trainable_parameters == routed
    # all-linear reaches MLA's projections, whose names no preset family has
    assert {"kv_a_proj_with_mqa", "kv_b_proj"} <= {t.kind for t in spec.all_block_linears()}
    named = Workload(spec, regime="lora", lora_rank=8, lora_targets=("q_proj", "o_proj"))
    assert 0 < named.trainable_parameters < workload.trainable_parameters


def test_gemma3_text_structure_from_config_checked_against_the_model():
    spec = _spec(GEMMA3_TEXT)
    h, f, layers, vocab, heads, kv, d = 1152, 6912, 26, 262144, 4, 1, 256
    block = h * heads * d * 2 + 2 * h * kv * d + 3 * h * f + 4 * h + 2 * d  # q,o; k,v; MLP; 4 norms; q/k norms
    assert spec.num_parameters == vocab * h + layers * block + h  # tied head counted once
    assert spec.tie_word_embeddings and spec.sliding_window == 512
    assert (spec.num_heads, spec.num_kv_heads, spec.head_dim) == (4, 1, 256)
    # four norms per block and the per-head q/k norms are in the formula (tests/estimate/test_trace_matrix.py)
    assert spec.analytic_activations and not spec.activations_note


def test_multimodal_wrapper_reads_its_language_model():
    """A Gemma-3 checkpoint config (model_type gemma3, text_config + vision_config): the text blocks count."""
    config = {"model_type": "gemma3", "text_config": GEMMA3_TEXT, "architectures": ["Gemma3ForConditionalGeneration"]}
    spec = _spec(config)
    text_only = _spec(GEMMA3_TEXT)
    assert spec.num_layers == 26 and spec.hidden_size == 1152 and spec.family == "gemma3_text"
    assert spec.num_parameters > text_only.num_parameters  # the vision tower and projector on top


@pytest.mark.parametrize("name", ["llama-3.1-8b", "qwen2.5-0.5b", "gemma-2-2b", "phi-3-mini", "gpt2", "bert-base"])
def test_built_model_agrees_with_the_preset_on_everything_the_formulas_read(name):
    from tests.estimate.test_models import _hf_config

    preset = MODEL_PRESETS[name]
    built = _spec(_hf_config(preset), name)
    assert built.built_tensors is not None and preset.built_tensors is None
    for field in ("num_parameters", "active_parameters", "largest_layer_parameters", "layer_parameters",
                  "hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads", "head_dim",
                  "vocab_size", "tie_word_embeddings", "family"):
        assert getattr(built, field) == getattr(preset, field), field
    assert built.analytic_activations, built.activations_note
    for regime in ("lora", "qlora"):
        ours, theirs = Workload(built, regime=regime), Workload(preset, regime=regime)
        assert ours.trainable_parameters == theirs.trainable_parameters
        assert ours.quantized_parameters == theirs.quantized_parameters


def test_mixtral_experts_are_one_fused_module_in_transformers_5():
    """transformers 5 fuses a layer's experts into one module: DeepSpeed's largest module is that, not the
    embedding, and `all-linear` LoRA no longer reaches the experts (they are not nn.Linear)."""
    from tests.estimate.test_models import _hf_config

    preset = MODEL_PRESETS["mixtral-8x7b"]
    built = _spec(_hf_config(preset), "mixtral")
    assert (built.num_parameters, built.active_parameters) == (preset.num_parameters, preset.active_parameters)
    fused = {t.module for t in built.tensors() if t.module.endswith("mlp.experts")}
    if fused:
        assert built.largest_layer_parameters == 8 * 3 * 4096 * 14336
        assert {t.kind for t in built.all_block_linears()} == {"q_proj", "k_proj", "v_proj", "o_proj"}


def test_llama_shaped_config_is_analytic_and_qwen3_adds_its_head_norms():
    from accelwiz.estimate.activations import activation_bytes
    from accelwiz.estimate.layer_terms import head_norm_bytes

    llama = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 688,
             "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}
    assert _spec(llama).analytic_activations
    qwen3 = llama | {"model_type": "qwen3", "head_dim": 64}
    spec = _spec(qwen3)
    assert spec.analytic_activations and not spec.activations_note
    # the same model but for its per-head q/k RMSNorms: the difference is that term in every layer
    plain, normed = (Workload(_spec(c), micro_batch=2, seq_len=64, precision="bf16") for c in (llama, qwen3))
    extra = head_norm_bytes(normed)
    assert extra == 2 * 64 * (6 * (4 + 2) * 64 + 4 * (4 + 2))  # fp32 input + bf16 normalised, fp32 rsqrt per head
    assert activation_bytes(normed)[0] - activation_bytes(plain)[0] == 2 * extra


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "llamma", "hidden_size": 8}, "not one transformers"),
        ({"hidden_size": 8}, "no model_type"),
        ({"model_type": "llama", "hidden_size": 64}, "missing field"),
        ({"model_type": "gpt2", "n_embd": 64}, "missing field.*n_layer"),
        ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": "2", "num_attention_heads": 4},
         "num_hidden_layers must be a positive integer"),
        ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 0, "num_attention_heads": 4},
         "positive integer"),
        ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 10**6, "num_attention_heads": 4},
         "larger than any model"),
        ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
          "num_key_value_heads": 3, "vocab_size": 10, "intermediate_size": 8}, "cannot share 3 key/value heads"),
        ({"model_type": "llama", "hidden_size": 131072, "intermediate_size": 1048576, "num_hidden_layers": 256,
          "num_attention_heads": 1024, "vocab_size": 32000}, "more than any trainable model"),
    ],
)
def test_bad_configs_are_one_line_usage_errors(config, message):
    with pytest.raises(UsageError, match=message) as info:
        _spec(config)
    assert "\n" not in info.value.message and info.value.hint


def test_a_json_list_and_a_model_transformers_cannot_build(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps([{"model_type": "llama"}]))
    with pytest.raises(InputError, match="not a JSON object"):
        resolve_model(str(path))
    # a value of the wrong kind deep in the config: transformers' own validation, one line
    bad = {"model_type": "llama", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128,
           "num_hidden_layers": 1, "num_attention_heads": 4, "rope_scaling": {"rope_type": "no-such-rope"}}
    path.write_text(json.dumps(bad))
    with pytest.raises(UsageError) as info:
        resolve_model(str(path))
    assert "\n" not in info.value.message


def test_cli_estimates_a_hand_written_deepseek_config_and_says_it_is_approximate(cli, tmp_path):
    path = tmp_path / "deepseek" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(DEEPSEEK_V2))
    result = cli("estimate", "--model", str(path), "--gpus", "8", "--gpu-memory", "80GiB")
    assert result.exit_code in (0, 1), result.stderr
    assert "15,706,484,224 parameters" in result.stdout
    assert "activations approximate" in result.stdout and "--trace" in result.stdout


@pytest.mark.parametrize(
    "model_type", ["deepseek_v3", "mamba", "exaone", "doge", "gemma4_text", "jamba", "rwkv", "gpt_neox"]
)
def test_families_with_their_own_layouts_build_from_their_default_configs(model_type):
    """State-space, hybrid, per-layer-config and many-expert families: the count equals the parameters of the
    model transformers builds (tied weights once), and the formulas are marked approximate."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type).to_dict() | {"model_type": model_type}
    spec = _spec(config, model_type)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type))
    assert spec.num_parameters == sum(p.numel() for p in model.parameters())
    assert spec.num_layers >= 1 and spec.largest_layer_parameters <= spec.num_parameters
    assert not spec.analytic_activations and spec.activations_note


@pytest.mark.parametrize(
    "text",
    [
        '[{"model_type": "llama"}]',
        '{"model_type": "no_such_family", "hidden_size": 64}',
        '{"model_type": "llama", "hidden_size": 64}',
        '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 100000, "num_attention_heads": 4}',
    ],
)
def test_cli_bad_config_is_exit_2_one_line(cli, tmp_path, text):
    path = tmp_path / "config.json"
    path.write_text(text)
    result = cli("estimate", "--model", str(path), "--gpu-memory", "80GiB")
    assert result.exit_code == 2 and "Traceback" not in result.stderr + result.stdout
    assert result.stderr.startswith("error: ") and "hint: " in result.stderr
