"""The fine-tuning question (full, LoRA, QLoRA): the choices in the estimator's numbers, the default (the
fastest that fits without NVMe offload) and why it is not full fine-tuning."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard.answers import Regime
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.costing import REGIME_NAME, plan_for, short_of
from accelwiz.wizard.cpu_plan import choice_words as cpu_choice_words
from accelwiz.wizard.cpu_plan import default_regime as cpu_default_regime
from accelwiz.wizard.post_settings import regimes_for


def regime_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    labels = {
        Regime.full: "Full fine-tuning (every weight trains)",
        Regime.lora: "LoRA (small adapters on a frozen model)",
        Regime.qlora: "QLoRA (LoRA on a 4-bit quantized model)",
    }
    choices = []
    for regime, label in labels.items():
        if regime not in regimes_for(answers):
            continue  # DPO/GRPO: full or LoRA (refuse_regime says why not QLoRA)
        plan = plan_for({**answers, "regime": regime}, system)
        best = plan.best_option(nvme=False) if plan else None
        if not system.gpus:  # the CPU run in host RAM (QLoRA's 4-bit layers need a GPU)
            label += ": needs a GPU" if regime is Regime.qlora else cpu_choice_words({**answers, "regime": regime},
                                                                                       system, frozenset({"regime"}))
        elif plan is not None:
            label += f": {best.label}, {best.per_gpu_bytes / GIB:.1f} GiB per GPU" if best else ": does not fit"
        choices.append(Choice(label, regime))
    return choices


def default_regime(answers: Mapping[str, Any], system: MachineProfile) -> Regime:
    """The fastest fine-tuning that fits without NVMe offload (which needs a path): full, else LoRA, else QLoRA;
    full when nothing fits at all (the fallbacks then say what would). Without GPUs, `estimate`'s CPU ladder
    (cpu_plan.py): full unless gradient checkpointing (or one process, micro-batch 1) does not make it fit."""
    if not system.gpus and answers.get("model"):
        return cpu_default_regime(answers, system)
    for regime in regimes_for(answers):
        plan = plan_for({**answers, "regime": regime}, system)
        if plan is None or plan.best_option(nvme=False) is not None:
            return regime
    return Regime.full


def explain_regime(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    """Why the default is not full fine-tuning, in one line."""
    regime = default_regime(answers, system)
    if regime is Regime.full:
        return None
    if not system.gpus:
        from accelwiz.wizard.cpu_plan import explain_default

        return explain_default(answers, system)
    full = plan_for({**answers, "regime": Regime.full}, system)
    picked = plan_for({**answers, "regime": regime}, system)
    assert full is not None and picked is not None
    frugal = min((o for o in full.options if not o.nvme), key=lambda o: (o.per_gpu_bytes, o.host_bytes))
    best = picked.best_option(nvme=False)
    assert best is not None
    nvme = next((o for o in full.options if o.nvme and o.fits), None)
    why = f"full fine-tuning does not fit: even {frugal.label} needs {short_of(frugal)}"
    if nvme is not None:
        why += " (NVMe offload would: choose full, then ZeRO-3 NVMe and give a path)"
    return f"default {REGIME_NAME[regime]} ({best.label}): {why}"
