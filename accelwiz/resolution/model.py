"""The model a run trains: exactly what `--model` or the plan names, or a refusal.

- a preset or alias the estimator knows (`llama-3.2-1b`) is its hub repository (`meta-llama/Llama-3.2-1B`), whose
  weights come from the Hugging Face cache (downloaded, with huggingface_hub's progress bar, when online);
- a checkpoint directory is its weights; a config.json is an explicit random initialisation, said on screen;
- accelwiz's toy models (`tiny`, `small`, `medium`) train only when named;
- a plan sized by a parameter count, or no model at all, has nothing to train: refused, never a silent toy.

No torch: `run` decides this before launching.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile

_TOY_HINT = "`--model tiny` trains accelwiz's built-in toy model"


@dataclass(frozen=True)
class ModelChoice:
    """What the trainer loads (`name`: a toy preset, a path or a hub id), who chose it, and why that name."""

    name: str
    source: str  # "flag" or "plan"
    note: str = ""


def model_to_train(flag: str | None, plan: PlanFile | None) -> ModelChoice:
    """The model of this run: `--model` first, else the plan's; raises UsageError when neither names one."""
    if flag is not None:
        name, note = weights_for(flag)
        return ModelChoice(name, "flag", note)
    if plan is None:
        raise UsageError("no model to train: neither --model nor a plan beside the config names one",
                         hint=f"pass --model with a checkpoint directory or hub id ({_TOY_HINT}), "
                              "or write a plan with `accelwiz init --model NAME`")
    model = plan.model
    if model.source in ("checkpoint", "config"):
        path = plan.resolve(model.name)
        if model.source == "config" and path.is_dir():  # init's plan for a directory holding only a config.json
            path = path / "config.json"
        return ModelChoice(str(path), "plan")
    if model.missing:
        raise UsageError(f"the plan {plan.path} names no model to train: `accelwiz init` wrote it without --model",
                         hint=f"pass --model NAME ({_TOY_HINT}), or write the plan again with "
                              "`accelwiz init --model NAME --force`")
    if model.source == "parameters":
        raise UsageError(f"the plan {plan.path} names no model to train: `{model.name}` is a parameter count, "
                         "which has no weights",
                         hint=f"pass --model NAME ({_TOY_HINT}), or write the plan again with "
                              "`accelwiz init --model NAME`")
    name, note = weights_for(model.name)
    return ModelChoice(name, "plan", note)


def weights_for(name: str) -> tuple[str, str]:
    """An estimator preset or alias -> its hub repository (with a note saying so); anything else as given."""
    from accelwiz.modelspec.lookup import named_model

    if Path(name).exists() or "/" in name:
        return name, ""
    spec = named_model(name)
    if spec is None or spec.hub_id is None:
        return name, ""
    return spec.hub_id, f"{name} is the hub model {spec.hub_id}"


def checkpoint_positions(path: Path | None) -> int | None:
    """The positions a checkpoint's (or config.json's) model was built for; None when it does not say."""
    if path is None:
        return None
    config = path / "config.json" if path.is_dir() else path
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    # GPT-2 says n_positions; most others max_position_embeddings
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
