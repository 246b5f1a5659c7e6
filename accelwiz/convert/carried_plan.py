"""The converted unit's plan: the source plan (the plan file init wrote beside the YAML) carried to the new files.

The plan says what no config key can (the machine, who supplies the multi-node rendezvous, the model and
workload); without it `check` of the converted YAML judges a plain `accelerate launch` (AW104 on a SLURM plan) and
the memory rules have no workload. Carried: every field, with the file names of the output, paths inside the plan
rebased to the new folder, `created_by` the convert command, and the estimate recomputed by the estimator for the
strategy the converted files ask for.

One owner for every command that writes a config under a new name: `convert` (new files for the other backend)
and `migrate -o` (the same backend rewritten, the DeepSpeed JSON it names unchanged) both carry the plan here;
without it `run --config NEW.yaml` would have no model and train other defaults than the source's plan.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from accelwiz.plan_file import PlanEstimate, PlanFile, PlanFiles


def source_plan(file: Path) -> PlanFile | None:
    """The plan beside `file` (accelerate.plan.yaml beside accelerate.yaml, OLD.plan.yaml beside OLD.yaml),
    loaded; None without one."""
    from accelwiz.defaults import find_plan

    found = find_plan(file)
    if found is None:
        return None
    from accelwiz.plan_file import load_plan

    return load_plan(found)


def carried_plan_text(plan: PlanFile, *, yaml_path: Path, yaml_text: str, command: str) -> tuple[Path, PlanFile, str]:
    """(where the plan of `yaml_path` goes, that plan, its text) for a YAML rewritten without a new JSON: the
    DeepSpeed JSON the source plan names stays the one the YAML uses, seen from the new folder."""
    from accelwiz.defaults import plan_path_for
    from accelwiz.plan_file import dump_plan

    json_path = json_text = None
    if plan.files.deepspeed is not None:
        json_path = plan.resolve(plan.files.deepspeed)
        try:
            json_text = json_path.read_text(encoding="utf-8") if json_path.is_file() else None
        except (OSError, UnicodeDecodeError):  # check of the new YAML names it; the estimate goes without it
            json_text = None
    carried = converted_plan(plan, yaml_path=yaml_path, yaml_text=yaml_text, json_path=json_path,
                             json_text=json_text, command=command)
    if plan.estimate is None:  # the source's plan had none (init writes none for CPU machines): none claimed here
        carried = carried.model_copy(update={"estimate": None})
    return plan_path_for(yaml_path), carried, dump_plan(carried)


def converted_plan(plan: PlanFile, *, yaml_path: Path, yaml_text: str, json_path: Path | None,
                   json_text: str | None, command: str) -> PlanFile:
    """The plan for the converted files at `yaml_path` (and `json_path`), from the source `plan`."""
    folder = yaml_path.parent
    files = PlanFiles(accelerate=yaml_path.name,
                      deepspeed=os.path.relpath(json_path, folder) if json_path is not None else None)
    changes: dict[str, Any] = {"created_by": command, "files": files,
                               "estimate": _estimate(plan, yaml_path, yaml_text, json_path, json_text)}
    model_name = _rebased(plan, plan.model.name, folder)
    if model_name != plan.model.name:
        changes["model"] = plan.model.model_copy(update={"name": model_name})
    system_name = _rebased(plan, plan.system.name, folder)
    if system_name != plan.system.name:
        changes["system"] = plan.system.model_copy(update={"name": system_name})
    return plan.model_copy(update=changes)


def _rebased(plan: PlanFile, written: str, folder: Path) -> str:
    """A relative path in the plan (a config.json, a checkpoint, a profile) that exists, as seen from `folder`;
    anything else (a preset name, a hub id, an absolute path) as written."""
    if plan.path is None or Path(written).expanduser().is_absolute():
        return written
    target = plan.resolve(written)
    if not target.exists():
        return written
    return os.path.relpath(target.resolve(), folder.resolve())


def _estimate(plan: PlanFile, yaml_path: Path, yaml_text: str, json_path: Path | None,
              json_text: str | None) -> PlanEstimate | None:
    """The estimator's figures for the converted files' strategy with the plan's workload and machine; None when
    the plan's model cannot be sized here or the strategy cannot be told (the old estimate would be wrong)."""
    from accelwiz.document import parse_text
    from accelwiz.effective import resolve
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.configured_strategy import strategy_from_effective
    from accelwiz.estimate.verdict import memory_verdict
    from accelwiz.estimate.planned import plan_workload

    workload, _why = plan_workload(plan)
    if workload is None:
        return None
    accelerate = parse_text(yaml_text, yaml_path, kind="accelerate")
    deepspeed = parse_text(json_text, json_path, kind="deepspeed") if json_text is not None and json_path else None
    strategy = strategy_from_effective(resolve(accelerate, deepspeed, plan))
    if strategy is None:
        return None
    estimate = estimate_memory(workload, strategy)
    verdict = memory_verdict(estimate, plan.system.gpu_capacity_bytes, plan.system.host_memory_bytes)
    return PlanEstimate(strategy=strategy.label, per_gpu_bytes=int(estimate.per_gpu_total),
                        host_bytes=int(estimate.host_bytes), verdict=verdict.verdict or "fits")
