"""What the built-in trainer trains with, and where each value came from.

Precedence, per value: the trainer's own flag (only when given) > what `accelwiz.effective.resolve` (the one
reader of what a run uses) finds in the YAML, the DeepSpeed JSON and the plan beside the YAML (`find_plan`) >
the trainer's default. A value written in the JSON is what DeepSpeed uses, so it wins over the plan (`check`
reports the disagreement); the plan supplies what no file owns (the DataLoader's micro-batch, the sequence
length, checkpointing, the method, LoRA rank/alpha/targets, the model). The run summary and `run_report.json`
show the source of each value.

No torch here: `accelwiz run` resolves the same settings before launching, to refuse bad input with one line.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.trainer.options import TrainerOptions

if TYPE_CHECKING:
    from accelwiz.document import Document
    from accelwiz.effective import EffectiveValue
    from accelwiz.plan_file import PlanFile

DEFAULT_MODEL = "tiny"
DEFAULT_MICRO_BATCH = 4
DEFAULT_SEQ_LEN = 64
DEFAULT_LORA_RANK = 8
# effective.py's source names, as the run summary says them
_SOURCE_NAMES = {"json": "deepspeed json", "yaml": "accelerate yaml"}


@dataclass(frozen=True)
class Chosen:
    value: Any
    source: str  # flag, plan, deepspeed json, accelerate yaml, accelerate default, derived, trainer default
    note: str = ""


@dataclass(frozen=True)
class TrainingSettings:
    model: Chosen
    micro_batch: Chosen
    gradient_accumulation: Chosen
    seq_len: Chosen
    gradient_checkpointing: Chosen
    method: Chosen
    lora_rank: Chosen
    lora_alpha: Chosen
    lora_targets: Chosen  # module names or [all-linear] (PEFT's shorthand), or None: the attention projections
    plan_path: Path | None = None
    deepspeed_json: Path | None = None

    def chosen(self) -> list[tuple[str, Chosen]]:
        names = [f.name for f in fields(self) if isinstance(getattr(self, f.name), Chosen)]
        if self.method.value == "full":
            names = [n for n in names if not n.startswith("lora_")]
        return [(n, getattr(self, n)) for n in names]

    def summary(self) -> str:
        """One line for the run's log: every value and its source."""
        parts = []
        for name, item in self.chosen():
            value = ",".join(item.value) if isinstance(item.value, list) else item.value
            shown = "auto" if value is None else str(value).lower() if isinstance(value, bool) else value
            parts.append(f"{name.replace('_', ' ')} {shown} ({item.source})")
        return "training with " + ", ".join(parts)

    def for_report(self) -> dict[str, Any]:
        report: dict[str, Any] = {
            name: {"value": item.value, "source": item.source, **({"note": item.note} if item.note else {})}
            for name, item in self.chosen()
        }
        report["plan_file"] = str(self.plan_path) if self.plan_path else None
        report["deepspeed_json"] = str(self.deepspeed_json) if self.deepspeed_json else None
        return report


def resolve_settings(opts: TrainerOptions, environ: Mapping[str, str] | None = None) -> TrainingSettings:
    """The settings of this run; raises InputError for a plan or config that cannot be read."""
    environ = os.environ if environ is None else environ
    accelerate_doc, deepspeed_doc, plan, plan_path = _inputs(opts.config, environ)
    effective = _effective(accelerate_doc, deepspeed_doc, plan)
    planned = plan_values(plan, plan_path)

    def pick(name: str, flag: Any, default: Any, effective_name: str | None = None) -> Chosen:
        from_files = effective.get(effective_name or name)
        if flag is not None:
            return Chosen(flag, "flag")
        # A value written in the YAML or JSON is what accelerate and DeepSpeed use; the plan fills the rest (and
        # `accelwiz check` reports a plan that disagrees with its files).
        if from_files is not None and from_files.is_set and from_files.source in ("yaml", "json", "plan"):
            return Chosen(from_files.value, _SOURCE_NAMES.get(from_files.source, from_files.source), from_files.note)
        if name in planned:
            return Chosen(planned[name], "plan")
        if from_files is not None and from_files.is_set:
            return Chosen(from_files.value, from_files.source, from_files.note)
        return Chosen(default, "trainer default")

    method = pick("method", opts.method, "full", "fine_tuning_method")
    rank = pick("lora_rank", opts.lora_rank, DEFAULT_LORA_RANK)
    targets = opts.lora_targets.split(",") if opts.lora_targets else None
    model = pick("model", opts.model, DEFAULT_MODEL)
    if model.source == "plan" and "model_note" in planned:
        model = Chosen(DEFAULT_MODEL, "trainer default", planned["model_note"])
    return TrainingSettings(
        model=model,
        micro_batch=pick("micro_batch", opts.micro_batch, DEFAULT_MICRO_BATCH),
        gradient_accumulation=pick("gradient_accumulation", opts.gradient_accumulation, 1),
        seq_len=pick("seq_len", opts.seq_len, DEFAULT_SEQ_LEN, "sequence_length"),
        gradient_checkpointing=pick("gradient_checkpointing", opts.gradient_checkpointing, False),
        method=method,
        lora_rank=rank,
        lora_alpha=pick("lora_alpha", opts.lora_alpha, 2 * rank.value),
        lora_targets=pick("lora_targets", [t.strip() for t in targets if t.strip()] if targets else None, None),
        plan_path=plan_path,
        deepspeed_json=deepspeed_doc.path if deepspeed_doc is not None else None,
    )


def plan_values(plan: PlanFile | None, plan_path: Path | None) -> dict[str, Any]:
    """The workload the plan records, by the trainer's names.

    `effective.resolve` carries the batch, sequence length, checkpointing and method (and is asked first); the
    LoRA settings and the model are read from the plan object here, as is everything when an older
    `resolve` without a `plan` argument is installed.
    """
    if plan is None or plan_path is None:
        return {}
    training, tuning = plan.training, plan.fine_tuning
    values: dict[str, Any] = {
        "micro_batch": training.micro_batch,
        "gradient_accumulation": training.gradient_accumulation,
        "seq_len": training.sequence_length,
        "gradient_checkpointing": training.gradient_checkpointing,
        "method": tuning.method,
    }
    if tuning.method != "full":
        for name in ("lora_rank", "lora_alpha", "lora_targets"):
            if getattr(tuning, name) is not None:
                values[name] = getattr(tuning, name)
    from accelwiz.trainer.models import PRESETS

    model = plan.model
    if model.source in ("checkpoint", "config"):
        path = Path(model.name)
        path = path if path.is_absolute() else plan_path.parent / path
        if model.source == "config" and path.is_dir():  # init's plan for a directory holding only a config.json
            path = path / "config.json"  # a random init by the plan's choice (a bare directory must have weights)
        values["model"] = str(path)
    elif model.source == "hub" or (model.source == "preset" and model.name in PRESETS):
        values["model"] = model.name
    else:  # an estimator preset or a parameter count: there are no weights to train
        values["model"] = DEFAULT_MODEL
        values["model_note"] = f"the plan's model {model.name!r} ({model.source}) has no weights or config to load"
    return values


def _inputs(config: Path | None, environ: Mapping[str, str]) -> tuple[
    Document | None, Document | None, PlanFile | None, Path | None
]:
    """The Accelerate YAML, the DeepSpeed JSON the workers use, and the plan beside the YAML."""
    from accelwiz.document import load_document
    from accelwiz.plan_file import find_plan, load_plan

    accelerate_doc = load_document(config, kind="accelerate") if config is not None and config.is_file() else None
    json_path = _deepspeed_json(accelerate_doc, environ)
    deepspeed_doc = load_document(json_path, kind="deepspeed") if json_path is not None else None
    plan_path = find_plan(config) if config is not None else None
    return accelerate_doc, deepspeed_doc, load_plan(plan_path) if plan_path else None, plan_path


def _deepspeed_json(accelerate_doc: Document | None, environ: Mapping[str, str]) -> Path | None:
    """The JSON as the worker opens it: `accelerate launch` exports its path; else resolved from the YAML."""
    exported = environ.get("ACCELERATE_DEEPSPEED_CONFIG_FILE", "").strip()
    if exported and exported.lower() != "none" and Path(exported).is_file():
        return Path(exported)
    if accelerate_doc is None:
        return None
    written = accelerate_doc.get("deepspeed_config", "deepspeed_config_file")
    if not isinstance(written, str) or written.strip().lower() in ("", "none"):
        return None
    from accelwiz.rules.engine import resolve_deepspeed_file

    return resolve_deepspeed_file(written.strip(), accelerate_doc.path).resolved


def _effective(accelerate_doc: Document | None, deepspeed_doc: Document | None,
               plan: PlanFile | None) -> dict[str, EffectiveValue]:
    from accelwiz.effective import resolve

    if accelerate_doc is None and deepspeed_doc is None:
        return {}
    if plan is not None and "plan" in inspect.signature(resolve).parameters:
        resolved = resolve(accelerate_doc, deepspeed_doc, plan=plan)
    else:
        resolved = resolve(accelerate_doc, deepspeed_doc)
    return dict(resolved.items())
