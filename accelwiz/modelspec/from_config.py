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
  reason names the terms it lacks and `accelwiz estimate --trace` measures the real model instead.

torch and transformers are imported here only, inside functions: presets never import them. Every failure a
user can cause (unknown model_type, missing or non-integer fields, absurd sizes, a config transformers rejects)
is a UsageError with a hint, never a traceback.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.modelspec.spec import ModelSpec, Tensor

# Config keys (after the config class's attribute_map) that must be written in the file: transformers fills a
# missing one with its own default (Llama: 32 layers of 4096), which would silently estimate another model.
_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads")
# Upper bounds far above any released model; a value past one is a typo (or a units mistake), and building
# it would take minutes. Far above released values: hidden 18,432 (PaLM), 126 layers (Llama-3.1-405B),
# 262,144 vocab (Gemma 3), 256 routed experts (DeepSeek-V3), 16,384 tiny experts (Doge).
_LIMITS = {
    "hidden_size": 131_072,
    "num_hidden_layers": 1_024,
    "num_attention_heads": 4_096,
    "num_key_value_heads": 4_096,
    "intermediate_size": 1_048_576,
    "moe_intermediate_size": 1_048_576,
    "vocab_size": 16_777_216,
    "num_local_experts": 65_536,  # Doge's default has 16,384 tiny experts
    "num_experts": 65_536,
    "n_routed_experts": 65_536,
    "head_dim": 65_536,
}
_MAX_PARAMETERS = 10**14  # 100T: past any model a training plan is made for
# Configs that wrap a language model (multimodal Gemma-3, Llava, ...): the text model's structure matters.
_TEXT_KEYS = ("text_config", "language_config", "llm_config")


def spec_from_config(config: dict[str, Any], *, name: str, source: str) -> ModelSpec:
    """The spec of the model `config` (a parsed config.json) describes; UsageError when it cannot be built."""
    if not isinstance(config, dict):
        raise UsageError(f"{source} is not a JSON object", hint="pass a HF config.json")
    from accelwiz.modelspec import cache as spec_cache

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
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise UsageError(f"{source} has no model_type", hint="pass a HF config.json (it names its model_type)")
    config_class = _config_class(model_type, source)
    _check_fields(config, config_class, source)
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # config validation and "Instantiating ..." notices are not ours to show
    try:
        hf_config = _build_config(config_class, config, source)
        model = _build_meta_model(hf_config, config, source)
    finally:
        hf_logging.set_verbosity(verbosity)
    return _spec(model, hf_config, name=name, source=source)


def _config_class(model_type: str, source: str) -> Any:
    from transformers import CONFIG_MAPPING

    try:
        return CONFIG_MAPPING[model_type]
    except KeyError:
        close = difflib.get_close_matches(model_type, list(CONFIG_MAPPING.keys()), n=3, cutoff=0.6)
        import transformers

        raise UsageError(
            f"model_type `{model_type}` in {source} is not one transformers {transformers.__version__} knows",
            hint=(f"did you mean {', '.join(close)}? " if close else "")
            + "upgrade transformers for a newer family, or pass the count, e.g. --params 7e9",
        ) from None


def _text_part(config: dict[str, Any]) -> dict[str, Any]:
    for key in _TEXT_KEYS:
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def _check_fields(config: dict[str, Any], config_class: Any, source: str) -> None:
    """Required fields present; every size a positive integer below its limit (after attribute_map aliases)."""
    text = _text_part(config)
    text_class = config_class
    if text is not config:
        from transformers import CONFIG_MAPPING

        text_class = CONFIG_MAPPING.get(text.get("model_type"), None) if "model_type" in text else None
    # attribute_map maps the canonical name to the one the class stores (gpt2: hidden_size -> n_embd)
    written = dict(getattr(text_class, "attribute_map", {}) or {})
    stored_to_canonical = {stored: canonical for canonical, stored in written.items()}
    canonical = {stored_to_canonical.get(key, key): value for key, value in text.items()}
    # a composite config may leave its text part to the class defaults (released checkpoints do); a field is
    # required only where the class itself writes it (Mamba has no heads, EXAONE stores num_layers)
    if text is config:
        missing = [key for key in _required(text_class, stored_to_canonical) if key not in canonical]
        if missing:
            names = ", ".join(written.get(key, key) for key in missing)
            raise UsageError(
                f"{source}: missing field(s) {names}",
                hint="transformers would fill them with its defaults (another model); write the model's values",
            )
    for key, limit in _LIMITS.items():
        if key not in canonical or canonical[key] is None:
            continue
        values = canonical[key] if isinstance(canonical[key], list) else [canonical[key]]  # per-layer lists
        if not values or any(type(v) is not int or v < 1 for v in values):
            raise UsageError(
                f"{source}: {key} must be a positive integer (got {json.dumps(canonical[key])[:60]})",
                hint="pass a complete HF config.json",
            )
        value = max(values)
        if value > limit:
            raise UsageError(
                f"{source}: {key} {value:,} is larger than any model ({limit:,} at most)",
                hint="check the config.json for a typo",
            )


def _required(config_class: Any, stored_to_canonical: dict[str, str]) -> list[str]:
    """The `_REQUIRED` fields this config class writes into its own config.json (its default's to_dict)."""
    if config_class is None:
        return []
    try:
        written = config_class().to_dict()
    except Exception:  # noqa: BLE001 - a class that cannot build its default: require nothing, transformers checks
        return list(_REQUIRED)
    keys = {stored_to_canonical.get(key, key) for key in written}
    return [key for key in _REQUIRED if key in keys]


def _build_config(config_class: Any, config: dict[str, Any], source: str) -> Any:
    fields = {key: value for key, value in config.items() if key not in ("model_type", "transformers_version")}
    try:
        return config_class.from_dict(fields)
    except Exception as exc:  # noqa: BLE001 - third-party validation raises anything; one line for the user
        raise UsageError(
            f"transformers rejects the config in {source}: {_first_line(exc)}", hint="pass a complete HF config.json"
        ) from None


def _model_class(hf_config: Any, config: dict[str, Any]) -> Any:
    """The class the checkpoint is (its `architectures`), else the causal LM, else the base model.

    Encoders (BERT-like types that have a masked-LM head) without `architectures` count as their base model
    with pooler, as the bert presets and the published 110M/340M counts do.
    """
    import transformers
    from transformers.models.auto import modeling_auto as auto

    for architecture in config.get("architectures") or ():
        cls = getattr(transformers, str(architecture), None) if isinstance(architecture, str) else None
        if cls is not None and hasattr(cls, "_from_config"):
            return cls
    model_type = hf_config.model_type
    encoder = model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not encoder:
        return transformers.AutoModelForCausalLM
    if model_type in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return transformers.AutoModelForImageTextToText
    return transformers.AutoModel


def _build_meta_model(hf_config: Any, config: dict[str, Any], source: str) -> Any:
    import warnings

    import torch

    cls = _model_class(hf_config, config)
    try:
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            build = cls.from_config if hasattr(cls, "from_config") else cls._from_config
            return build(hf_config)
    except Exception as exc:  # noqa: BLE001 - any model code may raise on a bad config; say it in one line
        raise UsageError(
            f"transformers cannot build the model in {source}: {_first_line(exc)}",
            hint="check the config.json's values against the model's published config, or pass --params 7e9",
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


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
    total = sum(t.numel for t in tensors)
    if total > _MAX_PARAMETERS:
        raise UsageError(
            f"{source} describes {total:,} parameters, more than any trainable model",
            hint="check the config.json for a typo",
        )
    embedding = model.get_input_embeddings()
    vocab, hidden = (int(d) for d in embedding.weight.shape)
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    tied = output is None or output.weight is embedding.weight

    heads = _int(_attr(text, "num_attention_heads")) or 1
    kv_heads = _int(_attr(text, "num_key_value_heads")) or heads
    if heads % kv_heads:
        raise UsageError(
            f"{source}: {heads} attention heads cannot share {kv_heads} key/value heads",
            hint="num_attention_heads must be a multiple of num_key_value_heads",
        )
    head_dim = _int(_attr(text, "head_dim")) or _int(_attr(text, "v_head_dim")) or hidden // heads
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
    dense_width = dense_width or 4 * hidden
    expert_width = _int(_attr(text, "moe_intermediate_size")) or dense_width
    shared = _int(_attr(text, "shared_expert_intermediate_size")) or 0
    if not shared and _int(_attr(text, "n_shared_experts")):
        shared = _int(_attr(text, "n_shared_experts")) * expert_width  # type: ignore[operator]
    if experts <= 1:
        top_k, expert_width, shared = 1, dense_width, 0
    window = _int(_attr(text, "sliding_window"))
    family = str(_attr(text, "model_type") or hf_config.model_type)
    spec = ModelSpec(
        name=name,
        family=family,
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=expert_width,
        num_layers=len(blocks),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        tie_word_embeddings=tied,
        max_position_embeddings=_int(_attr(text, "max_position_embeddings")) or 4096,
        num_experts=experts,
        experts_per_token=min(top_k, experts),
        attention_bias=any(t.name == "bias" and t.kind in ("q_proj", "k_proj") for t in tensors),
        source=source,
        shared_expert_intermediate_size=shared,
        q_lora_rank=_int(_attr(text, "q_lora_rank")),
        kv_lora_rank=_int(_attr(text, "kv_lora_rank")),
        qk_rope_head_dim=_int(_attr(text, "qk_rope_head_dim")),
        v_head_dim=_int(_attr(text, "v_head_dim")) if _int(_attr(text, "kv_lora_rank")) else None,
        sliding_window=window,
        softcapped_logits=_attr(text, "final_logit_softcapping") is not None,  # the class default counts
        sdpa_refusal=_sdpa_refusal(model, family),
        built_tensors=tensors,
    )
    analytic, why = activation_coverage(
        spec,
        blocks,
        hidden_from_config=_int(_attr(text, "hidden_size")),
        layers_from_config=_int(_attr(text, "num_hidden_layers")),
    )
    if not analytic:
        from dataclasses import replace

        spec = replace(spec, analytic_activations=False, activations_note=why)
    return spec


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
    if not spec.layernorm_block and not gated:
        lacks.append("no gated MLP")
    if not lacks:
        return True, ""
    return False, "activations approximate: " + "; ".join(lacks) + " (`accelwiz estimate --trace` measures them)"
