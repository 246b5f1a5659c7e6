"""Find a model by name, by a `config.json`, by a hub id, or by a parameter count: `resolve_model("llama-8b")`.

Order: a preset (name, alias, its HF repo or a same-architecture instruct repo: no torch import, instant), a
local config.json or its folder, a count (`7e9`), then a hub id of any spelling (`Qwen/Qwen3-8B`), whose
config.json huggingface_hub finds in its cache or downloads (hub.py). A config.json from a file or the hub is
built by transformers on the meta device (architecture.py), for any model_type it knows.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import AccelwizError, InputError, UsageError
from accelwiz.modelspec.preset_names import AMBIGUOUS_ALIASES, SAME_ARCHITECTURE_REPOS
from accelwiz.modelspec.presets import PRESETS
from accelwiz.modelspec.presets_remote import BUNDLED_PRESETS
from accelwiz.modelspec.spec import ModelSpec
from accelwiz.modelspec.toy_models import TOY_MODELS

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile

__all__ = ["MODEL_PRESETS", "ModelSpec", "list_models", "parse_count", "plan_model", "resolve_model", "spec_from_hf_config"]


def _index(presets: tuple[ModelSpec, ...]) -> dict[str, ModelSpec]:
    index: dict[str, ModelSpec] = {}
    for spec in presets:
        repo = (spec.hub_id,) if spec.hub_id else ()
        for key in (spec.name, *spec.aliases, *repo, *SAME_ARCHITECTURE_REPOS.get(spec.name, ())):
            index[key.lower()] = spec
    return index


# the bundled configs are named models too, but no shape `--params` borrows (model_with_count reads PRESETS)
MODEL_PRESETS: dict[str, ModelSpec] = {spec.name: spec for spec in PRESETS + BUNDLED_PRESETS}
_BY_ANY_NAME = _index(PRESETS + BUNDLED_PRESETS + TOY_MODELS)
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbt]?)\s*$", re.I)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def list_models() -> list[ModelSpec]:
    """The presets, smallest first."""
    return sorted(MODEL_PRESETS.values(), key=lambda s: (s.num_parameters, s.name))


def parse_count(text: str) -> int | None:
    """'7e9', '7B', '125M', '1.5b', '405000000000' -> an integer; None when it is not a count."""
    match = _COUNT.match(text)
    if not match:
        return None
    value = float(match.group(1)) * _SCALE[match.group(2).lower()]
    if not math.isfinite(value):  # '1e400' reads as inf, which round() cannot turn into an int
        raise UsageError(f"parameter count is too large: `{text}`", hint="pass e.g. --params 7e9")
    return round(value)


def named_model(name: str) -> ModelSpec | None:
    """The preset (or toy model) a name, alias or hub repository names; None for anything else."""
    return _BY_ANY_NAME.get(name.strip().lower())


def _refuse_ambiguous(name: str) -> None:
    """A short name several released models answer to (preset_names.AMBIGUOUS_ALIASES) is refused with them all: read as
    one of them, `qwen-7b` would silently size Qwen2.5-7B for a user training Qwen-7B (another vocabulary, another
    MLP)."""
    candidates = AMBIGUOUS_ALIASES.get(name.lower())
    if candidates:
        raise UsageError(f"model `{name}` names more than one model: {', '.join(candidates)}",
                         hint=f"pass one of them, e.g. --model {candidates[0]}")


def resolve_model(spec: str) -> ModelSpec:
    """A preset name or alias, a HF org/name of a preset, a config.json path (or its folder), a count, a hub id."""
    key = spec.strip()
    _refuse_ambiguous(key)
    named = named_model(key)
    if named is not None:
        return named
    from accelwiz.document.read import exists, is_dir, is_file  # a 10,000-character name is no path: no OSError

    path = Path(key).expanduser()
    if is_dir(path) and is_file(path / "config.json"):
        path = path / "config.json"
    if exists(path) and not is_dir(path):  # a FIFO or a device too: _read_json refuses it in one line
        return spec_from_hf_config(_read_json(path), name=path.parent.name or path.stem, source=str(path))
    count = parse_count(key)
    if count is not None:
        return model_with_count(count)
    if key.endswith(".json") or is_dir(path):
        raise InputError(f"no config.json at `{spec}`", hint="pass a HF config.json or its folder")
    from accelwiz.modelspec.hub import is_hub_id, resolve_hub_config

    if is_hub_id(key):
        config, source = resolve_hub_config(key)
        return spec_from_hf_config(config, name=key, source=source)
    close = difflib.get_close_matches(key.lower(), _BY_ANY_NAME, n=3, cutoff=0.5)
    hint = (
        f"did you mean {', '.join(close)}? " if close else ""
    ) + "See `accelwiz estimate --list-models`, pass a hub id (org/name), a config.json, or a count such as 7e9"
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
    from accelwiz.document.read import read_json_object  # bounded, a regular file, one line on any failure

    return read_json_object(path, what="a HF config.json", hint="pass a HF config.json")


def spec_from_hf_config(config: dict[str, Any], *, name: str, source: str) -> ModelSpec:
    """Any model_type transformers knows, built on the meta device (architecture.py; imports torch)."""
    from accelwiz.modelspec.from_config import spec_from_config

    return spec_from_config(config, name=name, source=source)


def plan_model(plan: PlanFile) -> tuple[ModelSpec | None, str | None]:
    """The estimator's ModelSpec for a plan's model: by name (a preset, or a config.json or checkpoint
    directory relative to the plan), else by its recorded parameter count (a hub id sized at `init`)."""
    model = plan.model
    if model.missing:
        return None, "the plan names no model (init was run without --model)"
    names = [model.name]
    if model.source in ("config", "checkpoint"):
        names.insert(0, str(plan.resolve(model.name)))
    for name in names:
        try:
            return resolve_model(name), None
        except AccelwizError:
            continue
    if model.parameters:
        return model_with_count(model.parameters), None
    return None, f"the plan's model `{model.name}` ({model.source}) cannot be sized here and records no parameter count"
