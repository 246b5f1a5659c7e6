"""LoRA on transformers 5's fused MoE models (modelspec/peft_moe.py): PEFT (0.19+) converts v4 target names and,
from 0.20, "all-linear" to parameter targets on the fused experts (gate_up_proj at rank 2r, down_proj) and the
router's weight. Differential: the real PEFT model, built on the meta device from tiny configs, against the analytic
count, at the peft installed here; the version rules themselves below, on a real spec."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.estimate.workload import ALL_LINEAR, Workload, check_lora_targets
from accelwiz.modelspec.lookup import spec_from_hf_config
from accelwiz.modelspec.peft_moe import moe_targets
from accelwiz.resolution.stack import installed_stack

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

_SHAPE = {"vocab_size": 128, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}
_CONFIGS = {
    # a shared expert (gate_proj/up_proj/down_proj nn.Linear) beside the routed ones
    "qwen2_moe": ("Qwen2MoeConfig", {"moe_intermediate_size": 32, "shared_expert_intermediate_size": 48,
                                     "num_experts": 4, "num_experts_per_tok": 2}),
    "mixtral": ("MixtralConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    # layer 0 dense (nn.Linear gate_proj/up_proj/down_proj), layer 1 MoE
    "qwen3_moe": ("Qwen3MoeConfig", {"moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
                                     "mlp_only_layers": [0], "head_dim": 16}),
    # MLA, a dense first block, shared experts (nn.Linear down_proj beside the fused routed down_proj)
    "deepseek_v2": ("DeepseekV2Config", {"moe_intermediate_size": 32, "n_routed_experts": 4, "n_shared_experts": 1,
                                         "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 16,
                                         "q_lora_rank": None, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
                                         "v_head_dim": 16}),
}
_TARGETS = [
    ("qwen2_moe", ALL_LINEAR), ("qwen2_moe", ("q_proj", "gate_proj", "up_proj")), ("qwen2_moe", ("down_proj",)),
    ("qwen2_moe", ("gate", "v_proj")), ("mixtral", ALL_LINEAR), ("mixtral", ("w1", "w3", "w2")),
    ("mixtral", ("q_proj", "v_proj")), ("qwen3_moe", ALL_LINEAR), ("qwen3_moe", ("gate_proj", "up_proj", "down_proj")),
    ("deepseek_v2", ALL_LINEAR), ("deepseek_v2", ("down_proj",)),
]


def _config(model_type: str):
    class_name, fields = _CONFIGS[model_type]
    return getattr(transformers, class_name)(**_SHAPE, **fields)


def _real_trainable(model_type: str, targets: tuple[str, ...]) -> int:
    config = _config(model_type)
    with torch.device("meta"):
        base = transformers.AutoModelForCausalLM.from_config(config)
    lora = peft.LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM",
                           target_modules="all-linear" if targets == ALL_LINEAR else list(targets))
    model = peft.get_peft_model(base, lora)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _workload(model_type: str, targets: tuple[str, ...], **stack: tuple[int, int, int]) -> Workload:
    from dataclasses import replace

    spec = spec_from_hf_config(_config(model_type).to_dict(), name=model_type, source="test")
    if targets != ALL_LINEAR:
        check_lora_targets(spec, list(targets))  # the v4 names are accepted where PEFT converts them
    return Workload(spec, regime="lora", lora_rank=8, lora_targets=targets,
                    stack=replace(installed_stack(), **stack))


def _target_id(value: object) -> str:
    return value if isinstance(value, str) else "all-linear" if value == ALL_LINEAR else "+".join(value)


@pytest.mark.parametrize(("model_type", "targets"), _TARGETS, ids=_target_id)
def test_the_analytic_count_is_the_real_peft_models(model_type: str, targets: tuple[str, ...]) -> None:
    assert _workload(model_type, targets).trainable_parameters == _real_trainable(model_type, targets)


def test_one_of_a_fused_pair_is_refused_as_peft_refuses_it() -> None:
    with pytest.raises(ValueError, match="without also targeting up_proj"):
        _real_trainable("qwen2_moe", ("q_proj", "gate_proj"))
    with pytest.raises(UsageError) as refused:
        _ = _workload("qwen2_moe", ("q_proj", "gate_proj")).trainable_parameters
    assert "without also targeting up_proj" in refused.value.message and "up_proj" in refused.value.hint


def test_the_conversion_follows_the_peft_release() -> None:
    experts = {"gate_up_proj": 2, "down_proj": 1, "gate.weight": 1}
    # 0.22 added qwen2_moe itself; qwen3_moe converts since 0.19 (transformers' own table), all-linear since 0.20
    assert moe_targets("qwen2_moe", set(), all_linear=True, peft=(0, 21, 2), transformers=None) is None
    assert moe_targets("qwen2_moe", set(), all_linear=True, peft=(0, 22, 0), transformers=None).parameters == experts
    assert moe_targets("qwen3_moe", set(), all_linear=True, peft=(0, 19, 1), transformers=None) is None
    assert moe_targets("qwen3_moe", set(), all_linear=True, peft=(0, 20, 0), transformers=None).parameters == experts
    assert moe_targets("qwen3_moe", {"down_proj"}, all_linear=False, peft=(0, 18, 1), transformers=None) is None
    assert moe_targets("mixtral", set(), all_linear=True, peft=None, transformers=(4, 57, 0)) is None
    # before 0.22 a converted name targets the fused parameter only: the dense layer's down_proj is left out
    old = _workload("qwen3_moe", ("down_proj",), peft=(0, 21, 2), transformers=(5, 0, 0))
    new = _workload("qwen3_moe", ("down_proj",), peft=(0, 22, 0), transformers=(5, 0, 0))
    dense_down = 8 * (96 + 64)  # r x (in + out) of layer 0's nn.Linear down_proj
    assert new.trainable_parameters - old.trainable_parameters == dense_down


def test_a_presets_per_expert_linears_are_fused_as_transformers_5_builds_them() -> None:
    from accelwiz.estimate.trace_matrix import build_config
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.modelspec.peft_moe import fused_view

    preset = resolve_model("mixtral-8x7b")  # v4 layout: experts.<e>.w1/w3/w2 nn.Linear
    built = spec_from_hf_config(build_config("mixtral-8x7b").to_dict(), name="mixtral", source="transformers")
    experts = lambda spec: [t for t in fused_view(spec.tensors())  # noqa: E731
                            if t.module.startswith("layers.0.mlp") and not t.linear]
    assert experts(preset) == experts(built)
    assert any(".experts.0." in t.module for t in preset.tensors())


@pytest.mark.parametrize("checkpointing", [False, True])
def test_pure_bf16_lora_on_the_fused_experts_matches_the_trace(checkpointing: bool) -> None:
    """Beside trace_matrix.py's mixed row: pure bf16 (fp32 adapters, whose expert factors PEFT casts to bf16 and
    baddbmm keeps: 2 B per factor element, none kept across checkpointed layers; the effective weights rebuilt
    per layer in the recompute)."""
    from accelwiz.estimate.trace_matrix import TOLERANCE, Setting, run

    row = run(Setting("qwen2-moe-a2.7b", 1, 256, "bf16", "sdpa", gradient_checkpointing=checkpointing, lora=True))
    for exact in ("weights", "gradients", "optimizer_states"):
        assert row["analytic"][exact] == row["traced"][exact], exact
    assert abs(row["error"]["activations"]) <= TOLERANCE and abs(row["error"]["peak"]) <= TOLERANCE, row["error"]
    assert row["analytic_phase"] == row["traced_phase"]
