"""Find a model by name, by a local `config.json`, or by a parameter count: `resolve_model("llama-8b")`.

No Hub access: a config.json must be a local file (`huggingface-cli download ORG/NAME config.json` fetches
one).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError
from accelwiz.estimate.presets import PRESETS
from accelwiz.estimate.spec import ModelSpec

__all__ = ["MODEL_PRESETS", "ModelSpec", "list_models", "parse_count", "resolve_model", "spec_from_hf_config"]


def _index(presets: tuple[ModelSpec, ...]) -> dict[str, ModelSpec]:
    index: dict[str, ModelSpec] = {}
    for spec in presets:
        for key in (spec.name, *spec.aliases, spec.source.split("huggingface.co/")[-1].split("/blob")[0]):
            index[key.lower()] = spec
    return index


MODEL_PRESETS: dict[str, ModelSpec] = {spec.name: spec for spec in PRESETS}
_BY_ANY_NAME = _index(PRESETS)
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbt]?)\s*$", re.I)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def list_models() -> list[ModelSpec]:
    """The presets, smallest first."""
    return sorted(PRESETS, key=lambda s: (s.num_parameters, s.name))


def parse_count(text: str) -> int | None:
    """'7e9', '7B', '125M', '1.5b', '405000000000' -> an integer; None when it is not a count."""
    match = _COUNT.match(text)
    if not match:
        return None
    value = float(match.group(1)) * _SCALE[match.group(2).lower()]
    if not math.isfinite(value):  # '1e400' reads as inf, which round() cannot turn into an int
        raise UsageError(f"parameter count is too large: `{text}`", hint="pass e.g. --params 7e9")
    return round(value)


def resolve_model(spec: str) -> ModelSpec:
    """A preset name or alias, a HF org/name of a preset, a config.json path (or its folder), or a count."""
    key = spec.strip()
    if key.lower() in _BY_ANY_NAME:
        return _BY_ANY_NAME[key.lower()]
    path = Path(key).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        path = path / "config.json"
    if path.is_file():
        return spec_from_hf_config(_read_json(path), name=path.parent.name or path.stem, source=str(path))
    count = parse_count(key)
    if count is not None:
        return model_with_count(count)
    if key.endswith(".json") or path.is_dir():
        raise InputError(f"no config.json at `{spec}`", hint="pass a HF config.json or its folder")
    close = difflib.get_close_matches(key.lower(), _BY_ANY_NAME, n=3, cutoff=0.5)
    hint = (
        f"did you mean {', '.join(close)}? " if close else ""
    ) + "See `accelwiz estimate --list-models`, pass a local config.json, or a count such as 7e9 or 7B"
    raise UsageError(f"unknown model `{spec}`", hint=hint)


def model_with_count(count: int) -> ModelSpec:
    """`--params N`: the count is exact; activations use the closest-sized Llama-like preset's shape."""
    if count <= 0:
        raise UsageError(f"parameter count must be positive (got {count})", hint="pass e.g. --params 7e9")
    shaped = [s for s in PRESETS if s.family in ("llama", "qwen2", "mistral")]
    nearest = min(shaped, key=lambda s: abs(s.num_parameters - count))
    return replace(
        nearest,
        name=f"{_human(count)} parameters",
        aliases=(),
        parameters_override=count,
        source=f"--params {count} (shape of {nearest.name} for activations)",
    )


def _human(count: int) -> str:
    for unit, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count >= scale:
            return f"{count / scale:.3g}{unit}"
    return str(count)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", hint="pass a HF config.json") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} is not a JSON object", hint="pass a HF config.json")
    return data


_SUPPORTED = ("llama", "mistral", "qwen2", "gemma2", "phi3", "mixtral", "gpt2", "bert")


def spec_from_hf_config(config: dict[str, Any], *, name: str, source: str) -> ModelSpec:
    """Read the parameter-relevant fields of a HF config.json for the model types accelwiz knows."""
    model_type = str(config.get("model_type", ""))
    if model_type not in _SUPPORTED:
        raise UsageError(
            f"model_type `{model_type or '?'}` in {source} is not supported",
            hint=f"supported: {', '.join(_SUPPORTED)}; or pass the count, e.g. --params 7e9",
        )
    reader = {"gpt2": _gpt2_fields, "bert": _bert_fields}.get(model_type, _decoder_fields)
    try:
        fields = reader(config)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise UsageError(
            f"{source}: missing or invalid field {exc}", hint="pass a complete HF config.json"
        ) from None
    bad = [key for key, value in fields.items() if type(value) is int and value < 1]
    if bad:
        raise UsageError(
            f"{source}: {', '.join(bad)} must be positive", hint="pass a complete HF config.json"
        )
    return ModelSpec(name=name, family=model_type, source=source, **fields)


def _gpt2_fields(c: dict[str, Any]) -> dict[str, Any]:
    h, heads = int(c["n_embd"]), int(c["n_head"])
    return {
        "vocab_size": int(c["vocab_size"]),
        "hidden_size": h,
        "intermediate_size": int(c.get("n_inner") or 4 * h),
        "num_layers": int(c["n_layer"]),
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": h // heads,
        "tie_word_embeddings": True,
        "max_position_embeddings": int(c.get("n_positions", 1024)),
    }


def _bert_fields(c: dict[str, Any]) -> dict[str, Any]:
    h, heads = int(c["hidden_size"]), int(c["num_attention_heads"])
    return {
        "vocab_size": int(c["vocab_size"]),
        "hidden_size": h,
        "intermediate_size": int(c["intermediate_size"]),
        "num_layers": int(c["num_hidden_layers"]),
        "num_heads": heads,
        "num_kv_heads": heads,
        "head_dim": h // heads,
        "tie_word_embeddings": True,
        "max_position_embeddings": int(c.get("max_position_embeddings", 512)),
    }


def _decoder_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Llama, Mistral, Qwen2, Gemma-2, Phi-3, Mixtral (Qwen2 always has q/k/v biases; Gemma-2 ties)."""
    h, heads = int(c["hidden_size"]), int(c["num_attention_heads"])
    model_type = c["model_type"]
    return {
        "vocab_size": int(c["vocab_size"]),
        "hidden_size": h,
        "intermediate_size": int(c["intermediate_size"]),
        "num_layers": int(c["num_hidden_layers"]),
        "num_heads": heads,
        "num_kv_heads": int(c.get("num_key_value_heads") or heads),
        "head_dim": int(c.get("head_dim") or h // heads),
        "tie_word_embeddings": bool(c.get("tie_word_embeddings", model_type == "gemma2")),
        "max_position_embeddings": int(c.get("max_position_embeddings", 4096)),
        "num_experts": int(c.get("num_local_experts", 1)),
        "experts_per_token": int(c.get("num_experts_per_tok", 1)),
        "attention_bias": model_type == "qwen2" or bool(c.get("attention_bias", False)),
    }
