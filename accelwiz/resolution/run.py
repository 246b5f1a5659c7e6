"""One resolved run: what `accelerate launch --config_file CONFIG` will train, decided once.

The files (the Accelerate YAML, the DeepSpeed JSON the workers open, the plan beside the YAML), the model
(`resolution.model`: exactly what --model or the plan names, or a refusal) and the workload
(`resolution.workload`: plan, files, flags, each value with its source). `run` resolves it before launching, to
refuse bad input in one line; the built-in trainer resolves the same thing in each worker, and its run summary,
`run_report.json` and the report's memory estimate are read from it.

No torch here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError
from accelwiz.resolution.model import model_to_train
from accelwiz.resolution.posttraining import ResolvedPostTraining, posttraining_workload, resolve_posttraining
from accelwiz.resolution.workload import ResolvedWorkload, Sourced, beyond_positions, resolve_workload

if TYPE_CHECKING:
    from accelwiz.document import Document
    from accelwiz.effective import EffectiveConfig
    from accelwiz.plan_file import PlanFile


@dataclass(frozen=True)
class Run:
    """One run, resolved once: the model that trains, the workload, the files and the plan they came from, and
    the launch they describe. Every value of `model` and `workload` carries its source."""

    model: Sourced
    workload: ResolvedWorkload
    post: ResolvedPostTraining | None = None  # resolve_run always sets it: the kind, and DPO/GRPO's settings
    plan: PlanFile | None = None
    plan_path: Path | None = None
    deepspeed_json: Path | None = None
    effective: EffectiveConfig | None = None

    @property
    def world_size(self) -> int:
        """Processes over all machines, as the launcher starts them (1 without a config)."""
        processes = self.effective.num_processes.value if self.effective is not None else None
        return processes if isinstance(processes, int) and processes > 0 else 1

    def __getattr__(self, name: str) -> Sourced:
        """`run.seq_len`, `run.method`, ...: the workload's fields, read through the run (dataclass fields and
        dunder names are looked up normally and never reach here)."""
        if name.startswith("__") or name not in ResolvedWorkload.__dataclass_fields__:
            raise AttributeError(name)
        return getattr(self.workload, name)

    def chosen(self) -> list[tuple[str, Sourced]]:
        post = self.post.items() if self.post is not None and self.post.is_posttraining else []
        return [("model", self.model), *self.workload.items(), *post]

    def summary(self) -> str:
        """One line for the run's log: every value and its source."""
        parts = []
        for name, item in self.chosen():
            value = ",".join(item.value) if isinstance(item.value, (list, tuple)) else item.value
            shown = str(value).lower() if isinstance(value, bool) else value
            parts.append(f"{name.replace('_', ' ')} {shown} ({item.source})")
        return "training with " + ", ".join(parts)

    def for_report(self) -> dict[str, Any]:
        report: dict[str, Any] = {
            # a tuple as a list, the library stack (resolution/stack.py) as {library: version}: JSON values
            name: {"value": list(item.value) if isinstance(item.value, tuple) else
                   item.value.as_json() if hasattr(item.value, "as_json") else item.value,
                   "source": item.source, **({"note": item.note} if item.note else {})}
            for name, item in self.chosen()
        }
        report["plan_file"] = str(self.plan_path) if self.plan_path else None
        report["deepspeed_json"] = str(self.deepspeed_json) if self.deepspeed_json else None
        return report


def resolve_run(config: Path | None, *, model: str | None = None, flags: dict[str, Any] | None = None,
                environ: Mapping[str, str] | None = None) -> Run:
    """The run `accelerate launch --config_file config` trains: the YAML, the DeepSpeed JSON the workers open, the
    plan beside the YAML, then `model` and the workload and post-training `flags` (None: not given). Raises
    InputError for a file that cannot be read, UsageError when nothing names a model or a value is beyond the
    model's limits or a flag contradicts a number a file writes."""
    environ = os.environ if environ is None else environ
    accelerate_doc, deepspeed_doc, plan, plan_path = _inputs(config, environ)
    choice = model_to_train(model, plan)
    positions = model_positions(choice.name)
    effective = _effective(accelerate_doc, deepspeed_doc, plan)
    workload = resolve_workload(plan=plan, effective=effective, flags=flags, max_positions=positions)
    post = resolve_posttraining(plan=plan, flags=flags, max_positions=positions)
    workload = posttraining_workload(workload, post.kind.value)  # DPO/GRPO: TRL's fused LM head
    check_limits(workload, post, positions, choice.name)
    from accelwiz.resolution.given import refuse_flags_against_files

    refuse_flags_against_files(workload, effective)  # a flag against a file's batch: refused by every command
    return Run(model=Sourced(choice.name, choice.source, choice.note), workload=workload, post=post, plan=plan,
               plan_path=plan_path, deepspeed_json=deepspeed_doc.path if deepspeed_doc is not None else None,
               effective=effective)


def model_positions(name: str) -> int | None:
    """The positions of the model `name` names, read without torch: a toy model's, or its config.json's (for a
    hub id, only once it is in the local cache)."""
    from accelwiz.modelspec.lookup import named_model
    from accelwiz.resolution.model import checkpoint_positions

    named = named_model(name)
    if named is not None and named.hub_id is None:
        return named.max_position_embeddings
    if Path(name).exists():
        return checkpoint_positions(Path(name))
    return None


def check_limits(workload: ResolvedWorkload, post: ResolvedPostTraining, positions: int | None, model: str) -> None:
    """A sequence longer than the model's positions indexes past its position table (an IndexError in every
    worker), or trains positions the model never learned: refused before anything starts. A DPO/GRPO run's
    sequence is its prompt + completion."""
    from accelwiz.resolution.posttraining import beyond_positions as post_beyond

    if post.is_posttraining:
        problem = post_beyond(post, positions, model)
        if problem is not None:
            raise UsageError(problem, hint=f"keep --max-prompt-length + --max-completion-length within {positions}")
        return
    problem = beyond_positions(workload.seq_len.value, positions, model)
    if problem is not None:
        raise UsageError(f"{problem} (seq_len from the {workload.seq_len.source})",
                         hint=f"pass --seq-len {positions} or less")


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
    from accelwiz.effective import named_deepspeed_file

    written = named_deepspeed_file(accelerate_doc)
    if accelerate_doc is None or written is None:
        return None
    from accelwiz.deepspeed_file import resolve_deepspeed_file

    return resolve_deepspeed_file(written, accelerate_doc.path).resolved


def _effective(accelerate_doc: Document | None, deepspeed_doc: Document | None,
               plan: PlanFile | None) -> EffectiveConfig | None:
    from accelwiz.effective import resolve

    if accelerate_doc is None and deepspeed_doc is None:
        return None
    return resolve(accelerate_doc, deepspeed_doc, plan=plan)
