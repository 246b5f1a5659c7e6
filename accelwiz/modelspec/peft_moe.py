"""PEFT's LoRA targets on the MoE models transformers 5 fused: the routed experts and the router become parameter
targets (`target_parameters`), so LoRA adapts them where a v4 name or "all-linear" asks for them.

transformers 5 stores a MoE layer's routed experts as two 3D parameters of one `experts` module (`gate_up_proj`
(E, 2f, h), `down_proj` (E, h, f)) and its router as a custom module (`gate`, a TopKRouter, not an nn.Linear).
PEFT's `convert_peft_config_for_transformers` (peft/utils/transformers_weight_conversion.py, called from
`BaseTuner.inject_adapter` under transformers >= 5) maps the v4 names of those modules onto them
(`_convert_peft_config_moe`):

* peft 0.19.0 introduced it, for a list of names only: `gate` -> `gate.weight`, gate/up (Mixtral's w1/w3) ->
  `gate_up_proj` at rank 2r and alpha 2x (they are fused), down (w2) -> `down_proj`; naming one of a fused pair
  without the other raises "Cannot convert PEFT target(s) ... without also targeting ...".
* peft 0.20.0 resolves a string first (`_resolve_string_target_modules`): "all-linear" adds every mapped v4 name,
  so it adapts the routed experts and the router as well.
* peft 0.22.0 keeps a name as a module target where it also names nn.Linear modules (DeepSeek's dense
  `down_proj`, Qwen2-MoE's shared expert; PEFT #3711/#3945) -- before, the name became a parameter target only
  and those linears were left out -- and adds qwen2_moe itself to the model types.

The model types: transformers' `conversion_mapping._MODEL_TO_CONVERSION_PATTERN` (5.25) entries that map onto
"qwen2_moe" or "mixtral", plus PEFT's own additions (mixtral since 0.19, qwen2_moe since 0.22).

A ParamWrapper on a 3D (E, out, in) parameter holds lora_A (r*E, in) and lora_B (out, r*E)
(peft/tuners/lora/layer.py `ParamWrapper.update_layer`); on the 2D router an ordinary (r, in) and (out, r).
No torch (the modelspec's rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.modelspec.tensors import Tensor

Version = tuple[int, int, int]

CONVERTS_SINCE: Version = (0, 19, 0)
RESOLVES_STRINGS_SINCE: Version = (0, 20, 0)
KEEPS_LINEAR_TARGETS_SINCE: Version = (0, 22, 0)

# transformers 5.25 conversion_mapping._MODEL_TO_CONVERSION_PATTERN: the model types whose MoE layers convert as
# Qwen2-MoE's or as Mixtral's
_AS_QWEN2_MOE = frozenset({
    "Dots3NoteTextModel", "UnlimitedOcrTextModel", "afmoe", "beam", "cohere2_moe", "deepseek_v2", "deepseek_v3",
    "deepseek_v32", "dots1", "ernie4_5_moe", "exaone_moe", "flex_olmo", "glm4_moe", "glm4_moe_lite", "glm4v_moe",
    "glm_moe_dsa", "hunyuan_v1_moe", "longcat_flash", "mellum", "olmoe", "qwen3_moe", "qwen3_next",
    "qwen3_omni_moe", "qwen3_omni_moe_text", "qwen3_omni_moe_thinker", "sarvam_mla", "solar_open",
})
_AS_MIXTRAL = frozenset({"minimax", "minimax_m2"})
# PEFT's own additions to that table (transformers_weight_conversion.py), and the release that added each
_PEFT_ADDED: dict[str, Version] = {"mixtral": (0, 19, 0), "qwen2_moe": (0, 22, 0)}

# _MOE_TARGET_MODULE_MAPPING and _MOE_FUSED_TARGETS: v4 name -> v5 parameter, and the pair fused into gate_up_proj
_MAPPING = {
    "mixtral": {"gate": "gate.weight", "w1": "gate_up_proj", "w3": "gate_up_proj", "w2": "down_proj"},
    "qwen2_moe": {"gate": "gate.weight", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj",
                  "down_proj": "down_proj"},
}
_FUSED = {"mixtral": ("w1", "w3"), "qwen2_moe": ("gate_proj", "up_proj")}


@dataclass(frozen=True)
class MoeTargets:
    """What PEFT adapts of a fused MoE model beside its linears: parameter targets (v5 names) with their rank
    factor, and the v4 names that stop being module targets (before peft 0.22)."""

    parameters: dict[str, int]  # "gate_up_proj" -> 2 (rank 2r), "down_proj" -> 1, "gate.weight" -> 1
    dropped: frozenset[str]


def _pattern(model_type: str, peft: Version | None) -> str | None:
    """The conversion pattern PEFT applies to `model_type`, or None (not a converted MoE type at that version)."""
    if model_type in _PEFT_ADDED:
        return model_type if peft is None or peft >= _PEFT_ADDED[model_type] else None
    if model_type in _AS_QWEN2_MOE:
        return "qwen2_moe"
    return "mixtral" if model_type in _AS_MIXTRAL else None


def convertible_names(model_type: str) -> frozenset[str]:
    """The v4 names a LoRA target may use on `model_type` at today's PEFT (none where it does not convert)."""
    pattern = _pattern(model_type, None)
    return frozenset(_MAPPING[pattern]) if pattern else frozenset()


def moe_targets(model_type: str, targets: set[str] | frozenset[str], *, all_linear: bool,
                peft: Version | None, transformers: Version | None) -> MoeTargets | None:
    """PEFT's conversion of `targets` on `model_type` (None: versions not installed, today's), or None where it
    converts nothing; UsageError where one of a fused pair is named without the other, as PEFT refuses it."""
    if transformers is not None and transformers < (5, 0, 0):
        return None  # v4 builds the experts as nn.Linear modules: nothing to convert
    if peft is not None and peft < CONVERTS_SINCE:
        return None
    pattern = _pattern(model_type, peft)
    if pattern is None:
        return None
    mapping = _MAPPING[pattern]
    if all_linear:
        if peft is not None and peft < RESOLVES_STRINGS_SINCE:
            return None  # the string is left as is: "all-linear" finds no expert and no router
        named = set(mapping)
    else:
        named = set(targets) & set(mapping)
    if not named:
        return None
    fused = _FUSED[pattern]
    present = [name for name in fused if name in named]
    if 0 < len(present) < len(fused):
        missing = ", ".join(name for name in fused if name not in named)
        raise UsageError(
            f"--lora-target {', '.join(present)}: PEFT cannot convert it without also targeting {missing} "
            f"(fused into gate_up_proj in transformers 5's {model_type})",
            hint=f"add --lora-target {missing}, or drop {', '.join(present)}")
    parameters = {mapping[name]: (len(fused) if mapping[name] == "gate_up_proj" else 1) for name in named}
    keeps = peft is None or peft >= KEEPS_LINEAR_TARGETS_SINCE
    return MoeTargets(parameters, frozenset() if keeps else frozenset(named))


def _targeted(tensor: Tensor, parameters: dict[str, int]) -> int:
    """The rank factor of `tensor` where a parameter target names it (PEFT matches the full name's suffix), else 0."""
    full = f"{tensor.module}.{tensor.name}"
    for target, factor in parameters.items():
        if not tensor.linear and (full == target or full.endswith("." + target)):
            return factor
    return 0


_PER_EXPERT = re.compile(r"(?P<container>.*\.experts)\.(?P<expert>\d+)")
_V5_NAME = {"w1": "gate_up_proj", "w3": "gate_up_proj", "w2": "down_proj",
            "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj", "down_proj": "down_proj"}


def fused_view(tensors: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """`tensors` as transformers 5 builds them: a preset's v4 per-expert linears (`experts.3.w1`) become each
    layer's 3D `experts.gate_up_proj` (E, 2f, h) and `experts.down_proj` (E, h, f), not linears."""
    from accelwiz.modelspec.tensors import Tensor

    stacks: dict[tuple[str, str], tuple[set[str], list[int]]] = {}  # -> (experts seen, [rows, in])
    order: list[tuple[str, str] | Tensor] = []
    for t in tensors:
        match = _PER_EXPERT.fullmatch(t.module.rsplit(".", 1)[0])
        if not (match and t.linear and t.kind in _V5_NAME):
            order.append(t)
            continue
        key = (match["container"], _V5_NAME[t.kind])
        if key not in stacks:
            stacks[key] = (set(), [0, t.shape[1]])
            order.append(key)
        experts, size = stacks[key]
        experts.add(match["expert"])
        size[0] += t.shape[0]
    fused = {key: Tensor(key[0], key[1], (len(e), size[0] // len(e), size[1])) for key, (e, size) in stacks.items()}
    return tuple(fused[item] if isinstance(item, tuple) and not isinstance(item, Tensor) else item
                 for item in order)


def targeted(tensors: tuple[Tensor, ...], moe: MoeTargets) -> list[tuple[Tensor, int]]:
    """The fused parameters (transformers 5's layout) a parameter target names, each with its rank factor."""
    return [(t, factor) for t in fused_view(tensors) if (factor := _targeted(t, moe.parameters))]


def parameter_matrices(tensors: tuple[Tensor, ...], rank: int, moe: MoeTargets) -> list[int]:
    """The element count of each LoRA A and B matrix PEFT adds on the targeted fused parameters: (r*E) x in and
    out x (r*E) on a 3D expert stack, r x in and out x r on the router's weight."""
    matrices: list[int] = []
    for t, factor in targeted(tensors, moe):
        r = rank * factor
        experts, (out_features, in_features) = (t.shape[0], t.shape[1:]) if len(t.shape) == 3 else (1, t.shape)
        matrices += [r * experts * in_features, out_features * r * experts]
    return matrices
