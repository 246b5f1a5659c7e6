"""The module classes of a model family, as accelerate's FSDP auto-wrap looks them up: the model transformers
builds for a `model_type` on the meta device (nothing allocated), its `_no_split_modules` and the class name of
every module in it (`get_module_class_from_name` walks the modules by class name, utils/dataclasses.py).

Class names do not depend on sizes, so the model is built from the family's default config with one layer.
torch and transformers are imported here only, inside the function: `check` imports them only when a rule that
needs them runs on an FSDP config with an explicit wrap class and a known model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class ModelModules:
    model_class: str
    no_split_modules: tuple[str, ...]
    class_names: frozenset[str]


@lru_cache(maxsize=16)
def model_modules(model_type: str) -> ModelModules | None:
    """The classes of the model `model_type` names; None when this transformers cannot build it."""
    import warnings

    try:
        import torch
        from transformers import AutoConfig, AutoModel, AutoModelForCausalLM
        from transformers.models.auto import modeling_auto as auto
    except ImportError:
        return None
    try:
        config = AutoConfig.for_model(model_type)
        for layers in ("num_hidden_layers", "n_layer", "num_layers"):  # one block shows every class name
            if isinstance(getattr(config, layers, None), int):
                setattr(config, layers, 1)
        causal = model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and \
            model_type not in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            model = (AutoModelForCausalLM if causal else AutoModel).from_config(config)
    except Exception:  # noqa: BLE001 - an unknown or unbuildable type: the rule stays silent, it cannot judge
        return None
    no_split = tuple(getattr(model, "_no_split_modules", None) or ())
    names = frozenset(type(module).__name__ for module in model.modules())
    return ModelModules(type(model).__name__, no_split, names)
