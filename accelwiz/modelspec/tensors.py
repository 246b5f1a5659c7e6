"""One parameter tensor, and the tensors of a preset family's model derived from its shape as HF transformers
builds them (a spec built from a config.json carries the built model's tensors instead: from_config.py)."""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec


class Tensor(NamedTuple):
    """One parameter tensor: the module that owns it (HF naming), its own name, its shape."""

    module: str
    name: str
    shape: tuple[int, ...]
    linear: bool = False  # a weight of an nn.Linear inside a block (LoRA/QLoRA target candidates)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def kind(self) -> str:
        """The module's last name component (`q_proj`, `c_attn`, ...), which LoRA `target_modules` matches."""
        return self.module.rsplit(".", 1)[-1]


def tensors_of(spec: ModelSpec) -> tuple[Tensor, ...]:
    """Every parameter tensor of `spec`'s family layout, with HF module names; a tied lm_head omitted."""
    builder = {"gpt2": _gpt2_tensors, "bert": _bert_tensors}.get(spec.family, _gated_tensors)
    return tuple(builder(spec))


def _gated_tensors(spec: ModelSpec) -> list[Tensor]:
    """Llama, Mistral, Qwen2, Gemma-2, Phi-3 and Mixtral: RMSNorm, rotary GQA attention, gated MLP."""
    h, f, d = spec.hidden_size, spec.intermediate_size, spec.head_dim
    q, kv = spec.num_heads * d, spec.num_kv_heads * d
    norms = spec.norms_per_block
    tensors = [Tensor("embed_tokens", "weight", (spec.vocab_size, h))]
    for i in range(spec.num_layers):
        p = f"layers.{i}."
        if spec.fused_projections:  # same count as separate q/k/v and gate/up
            tensors.append(Tensor(p + "self_attn.qkv_proj", "weight", (q + 2 * kv, h), True))
        else:
            tensors += [
                Tensor(p + "self_attn.q_proj", "weight", (q, h), True),
                Tensor(p + "self_attn.k_proj", "weight", (kv, h), True),
                Tensor(p + "self_attn.v_proj", "weight", (kv, h), True),
            ]
            if spec.attention_bias:
                tensors += [
                    Tensor(p + "self_attn.q_proj", "bias", (q,)),
                    Tensor(p + "self_attn.k_proj", "bias", (kv,)),
                    Tensor(p + "self_attn.v_proj", "bias", (kv,)),
                ]
        tensors.append(Tensor(p + "self_attn.o_proj", "weight", (h, q), True))
        if spec.num_experts > 1:  # Mixtral: a router and E experts of w1 (gate), w3 (up), w2 (down)
            tensors.append(Tensor(p + "mlp.gate", "weight", (spec.num_experts, h), False))
            for e in range(spec.num_experts):
                ep = f"{p}mlp.experts.{e}."
                tensors += [
                    Tensor(ep + "w1", "weight", (f, h), True),
                    Tensor(ep + "w3", "weight", (f, h), True),
                    Tensor(ep + "w2", "weight", (h, f), True),
                ]
        elif spec.fused_projections:
            tensors += [
                Tensor(p + "mlp.gate_up_proj", "weight", (2 * f, h), True),
                Tensor(p + "mlp.down_proj", "weight", (h, f), True),
            ]
        else:
            tensors += [
                Tensor(p + "mlp.gate_proj", "weight", (f, h), True),
                Tensor(p + "mlp.up_proj", "weight", (f, h), True),
                Tensor(p + "mlp.down_proj", "weight", (h, f), True),
            ]
        tensors += [Tensor(f"{p}norm{n}", "weight", (h,)) for n in range(norms)]
    tensors.append(Tensor("norm", "weight", (h,)))
    if not spec.tie_word_embeddings:
        tensors.append(Tensor("lm_head", "weight", (spec.vocab_size, h)))
    return tensors


def _gpt2_tensors(spec: ModelSpec) -> list[Tensor]:
    """GPT-2: learned positions, LayerNorm with bias, Conv1D projections with bias, 4h GELU MLP, tied head."""
    h, f = spec.hidden_size, spec.intermediate_size
    tensors = [
        Tensor("wte", "weight", (spec.vocab_size, h)),
        Tensor("wpe", "weight", (spec.max_position_embeddings, h)),
    ]
    for i in range(spec.num_layers):
        p = f"layers.{i}."
        tensors += [
            Tensor(p + "ln_1", "weight", (h,)),
            Tensor(p + "ln_1", "bias", (h,)),
            Tensor(p + "attn.c_attn", "weight", (h, 3 * h), True),
            Tensor(p + "attn.c_attn", "bias", (3 * h,)),
            Tensor(p + "attn.c_proj", "weight", (h, h), True),
            Tensor(p + "attn.c_proj", "bias", (h,)),
            Tensor(p + "ln_2", "weight", (h,)),
            Tensor(p + "ln_2", "bias", (h,)),
            Tensor(p + "mlp.c_fc", "weight", (h, f), True),
            Tensor(p + "mlp.c_fc", "bias", (f,)),
            Tensor(p + "mlp.c_proj", "weight", (f, h), True),
            Tensor(p + "mlp.c_proj", "bias", (h,)),
        ]
    tensors += [Tensor("ln_f", "weight", (h,)), Tensor("ln_f", "bias", (h,))]
    return tensors


def _bert_tensors(spec: ModelSpec) -> list[Tensor]:
    """BertModel (with pooler, as the published 110M/340M counts): post-LN encoder, GELU MLP, biases."""
    h, f = spec.hidden_size, spec.intermediate_size
    tensors = [
        Tensor("embeddings.word_embeddings", "weight", (spec.vocab_size, h)),
        Tensor("embeddings.position_embeddings", "weight", (spec.max_position_embeddings, h)),
        Tensor("embeddings.token_type_embeddings", "weight", (2, h)),
        Tensor("embeddings.LayerNorm", "weight", (h,)),
        Tensor("embeddings.LayerNorm", "bias", (h,)),
    ]
    for i in range(spec.num_layers):
        p = f"layers.{i}."
        for proj in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ):
            tensors += [Tensor(p + proj, "weight", (h, h), True), Tensor(p + proj, "bias", (h,))]
        tensors += [
            Tensor(p + "attention.output.LayerNorm", "weight", (h,)),
            Tensor(p + "attention.output.LayerNorm", "bias", (h,)),
            Tensor(p + "intermediate.dense", "weight", (f, h), True),
            Tensor(p + "intermediate.dense", "bias", (f,)),
            Tensor(p + "output.dense", "weight", (h, f), True),
            Tensor(p + "output.dense", "bias", (h,)),
            Tensor(p + "output.LayerNorm", "weight", (h,)),
            Tensor(p + "output.LayerNorm", "bias", (h,)),
        ]
    tensors += [Tensor("pooler.dense", "weight", (h, h)), Tensor("pooler.dense", "bias", (h,))]
    return tensors
