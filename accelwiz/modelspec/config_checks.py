"""A config.json read before anything is built: its model_type known to transformers, its required fields written,
every size a positive integer below a limit far above any released model. Each refusal is a UsageError with a hint.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from accelwiz.errors import UsageError

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
# Configs that wrap a language model (multimodal Gemma-3, Llava, ...): the text model's structure matters.
_TEXT_KEYS = ("text_config", "language_config", "llm_config")


def config_class(config: dict[str, Any], source: str) -> Any:
    """The transformers config class of the config's model_type; UsageError (with close names) when unknown."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise UsageError(f"{source} has no model_type", hint="pass a HF config.json (it names its model_type)")
    from transformers import CONFIG_MAPPING

    try:
        return CONFIG_MAPPING[model_type]
    except KeyError:
        from accelwiz.modelspec.remote_code import REMOTE_FAMILIES

        known = [*CONFIG_MAPPING.keys(), *REMOTE_FAMILIES]
        close = difflib.get_close_matches(model_type, known, n=3, cutoff=0.6)
        import transformers

        # a repository that ships its own modeling code says so in auto_map (trust_remote_code=True)
        remote = "auto_map" in config
        raise UsageError(
            f"model_type `{model_type}` in {source} is not one transformers {transformers.__version__} knows"
            + (" (its auto_map names the repository's own modeling code, which accelwiz does not run)" if remote
               else ""),
            hint=(f"did you mean {', '.join(close)}? " if close else "")
            + f"remote-code families sized offline: model_type {', '.join(REMOTE_FAMILIES)}; "
            + ("" if remote else "upgrade transformers for a newer family, ")
            + "or pass the count, e.g. --params 7e9",
        ) from None


def _text_part(config: dict[str, Any]) -> dict[str, Any]:
    for key in _TEXT_KEYS:
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def check_fields(config: dict[str, Any], config_class: Any, source: str) -> None:
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
        if canonical.get(key) is not None:
            _check_size(key, canonical[key], limit, source)


def _check_size(key: str, written: Any, limit: int, source: str) -> None:
    """One size (or a per-layer list of sizes): positive integers, the largest at most `limit`."""
    values = written if isinstance(written, list) else [written]
    if not values or any(type(v) is not int or v < 1 for v in values):
        raise UsageError(
            f"{source}: {key} must be a positive integer (got {json.dumps(written)[:60]})",
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
