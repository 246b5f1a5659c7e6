"""Any architecture transformers knows: build it on the meta device and read what the estimator needs.

`spec_from_config(config_dict, name=..., source=...)` turns a HF config.json (already parsed) into a
`ModelSpec`:

* the parameter tensors (hence the exact count, the largest module, the LoRA-targetable linears, the blocks)
  come from the model transformers builds from that config under `torch.device("meta")` — allocating nothing,
  in about a second, for any `model_type` in transformers' registry;
* the layer structure the activation formulas read (hidden, heads, kv heads, head dim, intermediate, experts,
  experts per token, shared experts, MLA ranks, vocab, tied embeddings, sliding window) comes from the config,
  checked against the built modules (embedding width and rows, number of blocks, tied lm_head);
* `analytic_activations` says whether activations.py has an exact formula for this block layout; when not, the
  reason names the terms it lacks and `accelwiz estimate --trace` measures the real model instead;
* a remote-code model_type (qwen, chatglm, baichuan, internlm2: remote_code.py) is built as the transformers
  architecture with the same tensors, then renamed to its own modules and given its code's features.

torch and transformers are imported only inside functions (here, config_checks.py, meta_build.py): presets never
import them. Every failure a user can cause (unknown model_type, missing or non-integer fields, absurd sizes, a
config transformers rejects) is a UsageError with a hint, never a traceback. config_checks.py checks the config,
meta_build.py builds it; this module reads the built model.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.modelspec.config_checks import check_fields, config_class
from accelwiz.modelspec.meta_build import build_on_meta
from accelwiz.modelspec.remote_code import as_remote, described, remote_family
from accelwiz.modelspec.spec import ModelSpec
from accelwiz.modelspec.stream import block_width, stream_fields
from accelwiz.modelspec.tensors import Tensor

_MAX_PARAMETERS = 10**14  # 100T: past any model a training plan is made for


def spec_from_config(config: dict[str, Any], *, name: str, source: str) -> ModelSpec:
    """The spec of the model `config` (a parsed config.json) describes; UsageError when it cannot be built."""
    if not isinstance(config, dict):
        raise UsageError(f"{source} is not a JSON object", hint="pass a HF config.json")
    from accelwiz.modelspec import cache as spec_cache

    remote = remote_family(config)
    if remote is not None:  # translated (and refused) before the cache: no torch for a config it cannot size
        source = described(remote, config, source)
    canonical = json.dumps(config, sort_keys=True, default=str)
    cached = spec_cache.load(canonical, name, source)  # built before: no torch, no transformers
    if cached is not None:
        return cached
    spec = _cached_spec(canonical, name, source)
    spec_cache.store(canonical, spec)
    return spec


@lru_cache(maxsize=32)
def _cached_spec(config_json: str, name: str, source: str) -> ModelSpec:
    config = json.loads(config_json)
    remote = remote_family(config)
    built = remote.translate(config, source) if remote is not None else config  # the stand-in's config
    known = config_class(built, source)
    check_fields(built, known, source)
    hf_config, model = build_on_meta(known, built, source)
    spec = _spec(model, hf_config, name=name, source=source)
    return as_remote(spec, remote, config) if remote is not None else spec


# -- reading the built model ---------------------------------------------------------------------------------


def _blocks(model: Any) -> tuple[str, Any]:
    """The ModuleList of transformer blocks: of all ModuleLists of one repeated class, the most parameters."""
    import torch

    best: tuple[int, str, Any] | None = None
    for path, module in model.named_modules():
        if not isinstance(module, torch.nn.ModuleList) or len(module) == 0:
            continue
        kinds = {type(child).__name__ for child in module}
        if len(kinds) > 2:  # a list of unrelated modules, not a stack of blocks
            continue
        count = sum(p.numel() for p in module.parameters())
        if best is None or count > best[0]:
            best = (count, path, module)
    if best is None:
        raise UsageError("the built model has no stack of transformer blocks", hint="pass --params 7e9 instead")
    return best[1], best[2]


def _tensors(model: Any, blocks_path: str) -> tuple[Tensor, ...]:
    """Every unique parameter (tied ones once), named with the blocks renamed `layers.<i>.` as the presets."""
    import torch

    linear_types: tuple[type, ...] = (torch.nn.Linear,)
    try:
        from transformers.pytorch_utils import Conv1D

        linear_types += (Conv1D,)
    except ImportError:  # pragma: no cover - Conv1D has been there since transformers 2
        pass
    modules = dict(model.named_modules())
    prefix = blocks_path + "."
    out: list[Tensor] = []
    for name, parameter in model.named_parameters():  # remove_duplicate=True: tied weights once
        module_path, _, own = name.rpartition(".")
        inside = module_path.startswith(prefix)
        shown = "layers." + module_path[len(prefix) :] if inside else module_path
        linear = inside and own == "weight" and isinstance(modules.get(module_path), linear_types)
        out.append(Tensor(shown, own, tuple(int(d) for d in parameter.shape), linear))
    return tuple(out)


def _int(value: Any) -> int | None:
    if isinstance(value, list) and value and all(type(v) is int for v in value):  # per-layer (Gemma-3n)
        value = max(value)
    return value if type(value) is int and value > 0 else None


def _attr(config: Any, name: str) -> Any:
    """A config attribute, or None where the config has none or refuses a global value (per-layer configs)."""
    try:
        return getattr(config, name, None)
    except Exception:  # noqa: BLE001 - e.g. AmbiguousGlobalPerLayerAttributeError for per-layer head_dim
        return None


def _sdpa_refusal(model: Any, family: str) -> str:
    """Why transformers has no SDPA attention for this model ("" where it has): the class's `_supports_sdpa`,
    with the reason families.NO_SDPA knows (Gemma-2's soft-capping)."""
    if getattr(type(model), "_supports_sdpa", True):
        return ""
    from accelwiz.modelspec.families import NO_SDPA

    return NO_SDPA.get(family) or f"transformers' {type(model).__name__} sets `_supports_sdpa = False`"


def _spec(model: Any, hf_config: Any, *, name: str, source: str) -> ModelSpec:
    text = hf_config.get_text_config() if hasattr(hf_config, "get_text_config") else hf_config
    blocks_path, blocks = _blocks(model)
    tensors = _tensors(model, blocks_path)
    _refuse_too_many(tensors, source)
    vocab, width, tied = _embeddings(model)
    hidden = block_width(tensors, width)  # OPT's projection pair: the blocks are wider than the embedding
    heads, kv_heads, head_dim = _attention(text, hidden, source)
    family = str(_attr(text, "model_type") or hf_config.model_type)
    spec = ModelSpec(
        name=name,
        family=family,
        vocab_size=vocab,
        hidden_size=hidden,
        num_layers=len(blocks),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        tie_word_embeddings=tied,
        max_position_embeddings=_int(_attr(text, "max_position_embeddings")) or 4096,
        attention_bias=any(t.name == "bias" and t.kind in ("q_proj", "k_proj") for t in tensors),
        source=source,
        sliding_window=_int(_attr(text, "sliding_window")),
        softcapped_logits=_attr(text, "final_logit_softcapping") is not None,  # the class default counts
        sdpa_refusal=_sdpa_refusal(model, family),
        built_tensors=tensors,
        **_mlp(text, hidden),
        **stream_fields(model, text, blocks_path, hidden=hidden, embedding_width=width),
        **_latent_attention(text),
    )
    analytic, why = activation_coverage(
        spec,
        blocks,
        hidden_from_config=_int(_attr(text, "hidden_size")),
        layers_from_config=_int(_attr(text, "num_hidden_layers")),
    )
    return spec if analytic else replace(spec, analytic_activations=False, activations_note=why)


def _refuse_too_many(tensors: tuple[Tensor, ...], source: str) -> None:
    total = sum(t.numel for t in tensors)
    if total > _MAX_PARAMETERS:
        raise UsageError(
            f"{source} describes {total:,} parameters, more than any trainable model",
            hint="check the config.json for a typo",
        )


def _embeddings(model: Any) -> tuple[int, int, bool]:
    """(vocab, width) of the built input embedding, and whether the output layer shares its weight."""
    embedding = model.get_input_embeddings()
    vocab, hidden = (int(d) for d in embedding.weight.shape)
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    return vocab, hidden, output is None or output.weight is embedding.weight


def _attention(text: Any, hidden: int, source: str) -> tuple[int, int, int]:
    """(heads, key/value heads, head dim); UsageError where the heads cannot share the key/value heads."""
    heads = _int(_attr(text, "num_attention_heads")) or 1
    kv_heads = _int(_attr(text, "num_key_value_heads")) or heads
    if heads % kv_heads:
        raise UsageError(
            f"{source}: {heads} attention heads cannot share {kv_heads} key/value heads",
            hint="num_attention_heads must be a multiple of num_key_value_heads",
        )
    head_dim = _int(_attr(text, "head_dim")) or _int(_attr(text, "v_head_dim")) or hidden // heads
    return heads, kv_heads, head_dim


def _mlp(text: Any, hidden: int) -> dict[str, int]:
    """The MLP's ModelSpec fields: the routed experts (one expert of the dense width where there are none),
    experts per token, one expert's width and the shared experts' total width."""
    experts = next(
        (
            _int(_attr(text, key))
            for key in ("num_local_experts", "num_experts", "n_routed_experts")
            if _int(_attr(text, key))
        ),
        1,
    )
    top_k = _int(_attr(text, "num_experts_per_tok")) or _int(_attr(text, "moe_topk")) or 1
    dense_width = _int(_attr(text, "intermediate_size")) or _int(_attr(text, "n_inner"))
    dense_width = dense_width or _int(_attr(text, "ffn_dim"))  # OPT's name
    dense_width = dense_width or 4 * hidden
    expert_width = _int(_attr(text, "moe_intermediate_size")) or dense_width
    shared = _int(_attr(text, "shared_expert_intermediate_size")) or 0
    if not shared and _int(_attr(text, "n_shared_experts")):
        shared = _int(_attr(text, "n_shared_experts")) * expert_width  # type: ignore[operator]
    if experts <= 1:
        top_k, expert_width, shared = 1, dense_width, 0
    return {
        "intermediate_size": expert_width,
        "num_experts": experts,
        "experts_per_token": min(top_k, experts),
        "shared_expert_intermediate_size": shared,
    }


def _latent_attention(text: Any) -> dict[str, int | None]:
    """Multi-head latent attention's ranks (DeepSeek-V2/V3); all None for other attention."""
    kv_rank = _int(_attr(text, "kv_lora_rank"))
    return {
        "q_lora_rank": _int(_attr(text, "q_lora_rank")),
        "kv_lora_rank": kv_rank,
        "qk_rope_head_dim": _int(_attr(text, "qk_rope_head_dim")),
        "v_head_dim": _int(_attr(text, "v_head_dim")) if kv_rank else None,
    }


def activation_coverage(
    spec: ModelSpec, blocks: Any, *, hidden_from_config: int | None, layers_from_config: int | None = None
) -> tuple[bool, str]:
    """Whether activations.py's formula is exact for these blocks; if not, the terms it lacks (and where the
    config's structure disagrees with the built modules, which the estimate then follows)."""
    lacks: list[str] = []
    if hidden_from_config is not None and hidden_from_config != spec.hidden_size:
        lacks.append(f"hidden_size {hidden_from_config} in the config but {spec.hidden_size} in the embedding")
    if layers_from_config is not None and layers_from_config != spec.num_layers:
        lacks.append(f"num_hidden_layers {layers_from_config} in the config but {spec.num_layers} blocks built")
    if not spec.term_by_term_activations:
        lacks.append(f"model_type `{spec.family}` has no term-by-term formula")
    kinds = {type(block).__name__ for block in blocks}
    if len(kinds) > 1:
        lacks.append(f"mixed block types ({', '.join(sorted(kinds))})")
    if spec.kv_lora_rank:
        lacks.append("multi-head latent attention (MLA)")
    # shared experts and per-head q/k RMSNorms have their terms in activations.py (checked against the trace)
    linear_kinds = {t.kind for t in spec.all_block_linears()}
    first = blocks[0]
    norms = sum(
        1
        for path, module in first.named_modules()
        if "Norm" in type(module).__name__ and path.rpartition(".")[2] not in ("q_norm", "k_norm")
    )
    expected_norms = spec.norms_per_block
    if not spec.layernorm_block and norms != expected_norms and not spec.kv_lora_rank:
        lacks.append(f"{norms} norms per block (the formula has {expected_norms})")
    gated = {"gate_proj", "gate_up_proj", "w1"} & linear_kinds or spec.num_experts > 1
    if not spec.layernorm_block and not spec.relu_mlp and not gated:
        lacks.append("no gated MLP")
    if spec.relu_mlp and spec.mlp_activation != "relu":  # Galactica: OPT blocks with a GELU MLP
        lacks.append(f"a `{spec.mlp_activation}` MLP (the formula is ReLU's)")
    if not lacks:
        return True, ""
    return False, "activations approximate: " + "; ".join(lacks) + " (`accelwiz estimate --trace` measures them)"
