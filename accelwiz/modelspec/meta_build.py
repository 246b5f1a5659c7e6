"""Building a checked config.json with transformers: its config object, then the model on the meta device
(allocating nothing). Whatever transformers raises on a bad config becomes one UsageError line with a hint.
"""

from __future__ import annotations

from typing import Any

from accelwiz.errors import UsageError


def build_on_meta(config_class: Any, config: dict[str, Any], source: str) -> tuple[Any, Any]:
    """(the transformers config, the model built from it on `meta`), transformers' notices silenced."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # config validation and "Instantiating ..." notices are not ours to show
    try:
        hf_config = _build_config(config_class, config, source)
        return hf_config, _build_meta_model(hf_config, config, source)
    finally:
        hf_logging.set_verbosity(verbosity)


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
