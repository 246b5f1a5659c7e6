"""AW114-AW115: the plan file (`accelwiz init` writes it beside the YAML) against the files it belongs to.

The plan records what the memory estimate assumed; `check` runs the memory and hardware rules with it. When the
YAML or the DeepSpeed JSON says something else (another process count, precision or batch), the run is not the
one that was estimated: that disagreement is a finding of its own, pointed at the key in the config.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.vocab import MIXED_PRECISION_OF_PLAN

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveValue
    from accelwiz.plan_file import PlanFile

# The plan's precision as accelerate's mixed_precision spells it (the one table: accelwiz/vocab.py).
_MIXED_PRECISION = MIXED_PRECISION_OF_PLAN
_FROM_FILES = ("yaml", "json")  # effective values the config files wrote (not defaults, not the plan's own)


def _plan_name(plan: PlanFile) -> str:
    return plan.path.name if plan.path is not None else "the plan"


def _in_files(value: EffectiveValue) -> bool:
    return value.source in _FROM_FILES and value.strict is not None


def _disagreements(ctx: CheckContext, plan: PlanFile) -> Iterator[tuple[EffectiveValue, str, str, str]]:
    """(the file's value, what it is, the file's value as text, the plan's value as text) for each mismatch."""
    view = ctx.effective
    system, training = plan.system, plan.training
    machines, processes = view.num_machines, view.num_processes
    if ctx.accelerate is not None:
        if machines.strict is not None and machines.strict != system.machines:
            yield machines, "num_machines", str(machines.strict), f"{system.machines} machine(s)"
        if processes.strict is not None and processes.strict > 0 and processes.strict != plan.world_size:
            per = f"{system.processes} GPU(s)" if system.gpus_per_machine else f"{system.processes} process(es)"
            yield processes, "num_processes", str(processes.strict), (
                f"{system.machines} machine(s) x {per} = {plan.world_size}")
    precision = view.mixed_precision
    planned_precision = _MIXED_PRECISION[training.precision]
    # with the HF Trainer owning precision, only a precision the files write can disagree
    precision_known = _in_files(precision) or (plan.training.owner == "accelerate" and precision.strict is not None)
    if precision_known and str(precision.strict).lower() != planned_precision:
        yield precision, "precision", str(precision.strict), planned_precision
    for value, what, planned in ((view.micro_batch, "micro-batch", training.micro_batch),
                                 (view.gradient_accumulation, "gradient accumulation",
                                  training.gradient_accumulation)):
        if _in_files(value) and value.strict != planned:
            yield value, what, str(value.strict), str(planned)


@rule("AW114", "plan-disagrees-with-config", Severity.ERROR,
      fix="Make the config say what the plan says, or run `accelwiz init` again to plan what the config says")
def plan_disagrees_with_config(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the plan file beside the YAML (`accelerate.plan.yaml`, or `--plan FILE`) with the YAML and
    its DeepSpeed JSON: the machine count, the process count (machines × GPUs per machine), the precision,
    the micro-batch and the gradient accumulation.

    ## Why is this bad?
    The plan is what the memory estimate (and `check`'s memory rules) assumed and what the built-in trainer
    reads. A config edited by hand afterwards runs something else: another global batch, another precision,
    another memory footprint, while every verdict still describes the plan.

    ## Example
    ```yaml
    # accelerate.plan.yaml
    files: {accelerate: accelerate.yaml}
    system: {name: 2x8xH100, machines: 2, gpus_per_machine: 8}
    model: {name: llama-8b}
    training: {micro_batch: 1, sequence_length: 4096, precision: bf16}
    ```
    beside
    ```yaml
    distributed_type: MULTI_GPU
    num_machines: 1
    num_processes: 8
    mixed_precision: bf16
    ```
    Use instead: `num_machines: 2` and `num_processes: 16`, as the plan says:
    ```yaml
    distributed_type: MULTI_GPU
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    mixed_precision: bf16
    ```
    """
    plan = ctx.plan
    if plan is None:
        return
    for value, what, written, planned in _disagreements(ctx, plan):
        role = value.role if value.role in ("accelerate", "deepspeed") else "accelerate"
        path = value.path or (("num_processes",) if what == "num_processes" else ())
        yield Finding(role, path, f"{what} {written} disagrees with {_plan_name(plan)}, which planned {planned}",
                      f"change it to {planned.rsplit('= ', 1)[-1]}, or run `accelwiz init` again for {written}"
                      if what in ("num_processes", "num_machines", "micro-batch", "gradient accumulation")
                      else None)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


@rule("AW115", "plan-names-missing-file", Severity.ERROR,
      fix="Put the plan beside the files it names, or run `accelwiz init` again to write them together")
def plan_names_missing_file(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a plan file that names an Accelerate YAML, a DeepSpeed JSON or a local model (a config.json or a
    checkpoint directory) that does not exist, or that belongs to another YAML than the one it is checked with.
    Paths in a plan are relative to the plan's own directory.

    ## Why is this bad?
    A plan describes one set of files. Copied or renamed apart from them it describes nothing that will run: the
    trainer would look for a model that is not there, and `check` would judge a config with another's plan.

    ## Example
    ```yaml
    # accelerate.plan.yaml
    files:
      accelerate: accelerate.yaml
      deepspeed: ds_config.json   # renamed to ds_zero3.json since
    system: {name: 8xH100-80GB, gpus_per_machine: 8}
    model: {name: llama-8b}
    training: {micro_batch: 1, sequence_length: 4096}
    ```
    beside
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      deepspeed_config_file: ds_zero3.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}
    ```
    Use instead: `deepspeed: ds_zero3.json`.
    ```yaml
    # accelerate.plan.yaml
    files:
      accelerate: accelerate.yaml
      deepspeed: ds_zero3.json
    system: {name: 8xH100-80GB, gpus_per_machine: 8}
    model: {name: llama-8b}
    training: {micro_batch: 1, sequence_length: 4096}
    ```
    """
    plan = ctx.plan
    if plan is None:
        return
    yield from _missing_yaml(ctx, plan)
    if plan.files.deepspeed is not None:
        yield from _missing_json(ctx, plan)
    yield from _missing_model(plan)


def _missing_model(plan: object) -> Iterator[Finding]:
    """The plan's local model (a config.json or a checkpoint directory), absent."""
    if plan.model.source in ("config", "checkpoint") and not plan.resolve(plan.model.name).exists():
        what = "config.json" if plan.model.source == "config" else "checkpoint directory"
        yield Finding("accelerate", (), f"{_plan_name(plan)} names the model {what} `{plan.model.name}`, which does "
                                        f"not exist (looked in {plan.resolve(plan.model.name).parent})")


def _missing_yaml(ctx: CheckContext, plan: object) -> Iterator[Finding]:
    """The plan's Accelerate YAML: absent, or another than the one checked."""
    name = _plan_name(plan)
    planned_yaml = plan.resolve(plan.files.accelerate)
    if not planned_yaml.is_file():
        yield Finding("accelerate", (), f"{name} names the Accelerate YAML `{plan.files.accelerate}`, which does not "
                                        f"exist (looked in {planned_yaml.parent})")
    elif ctx.accelerate is not None and not _same_file(planned_yaml, ctx.accelerate.path):
        yield Finding("accelerate", (), f"{name} belongs to `{plan.files.accelerate}`, not to "
                                        f"`{ctx.accelerate.path.name}`",
                      f"pass the plan of {ctx.accelerate.path.name} with --plan, or check {plan.files.accelerate}")


def _missing_json(ctx: CheckContext, plan: object) -> Iterator[Finding]:
    """The plan's DeepSpeed JSON: absent, or another than the one the config uses."""
    name = _plan_name(plan)
    planned_json = plan.resolve(plan.files.deepspeed)
    path = ("deepspeed_config", "deepspeed_config_file")
    if not planned_json.is_file():
        yield Finding("accelerate", path, f"{name} names the DeepSpeed JSON `{plan.files.deepspeed}`, which "
                                          f"does not exist (looked in {planned_json.parent})")
    elif ctx.deepspeed is not None and not _same_file(planned_json, ctx.deepspeed.path):
        yield Finding("accelerate", path, f"{name} names the DeepSpeed JSON `{plan.files.deepspeed}`, but the "
                                          f"config uses `{ctx.deepspeed.path.name}`")
