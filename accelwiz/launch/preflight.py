"""Before launching: load the config, decide the launch environment, and check the config as it will be launched
with the real rule engine (`check_unit`); then summarise what will run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError, UsageError
from accelwiz.launch.environment import EnvChange, environment_changes, torch_build
from accelwiz.launch.spec import LaunchSpec

if TYPE_CHECKING:
    from accelwiz.probe.model import MachineProfile
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic


@dataclass(frozen=True)
class Preflight:
    config_path: Path
    unit: CheckContext
    diagnostics: list[Diagnostic]
    spec: LaunchSpec
    env: list[EnvChange]
    handled: list[Diagnostic]  # findings the launch makes moot; each `.handled` says why

    @property
    def errors(self) -> list[Diagnostic]:
        from accelwiz.rules.diagnostic import Severity

        return [d for d in self.diagnostics if d.severity is Severity.ERROR]


def preflight(
    config_path: Path,
    *,
    system: MachineProfile | None,
    builtin_trainer: bool = False,
    here: bool = True,
    environ: Mapping[str, str] | None = None,
    training_args: Any = None,
) -> Preflight:
    """Check the config as `accelwiz check` would (every rule), with the facts of this launch; raises on a missing
    or unreadable config.

    `here` is False for plans run on other machines (per-node commands, SLURM), which supply each node's rank and
    the rendezvous address and get no CPU fallback.
    """
    if not config_path.is_file():
        raise InputError(
            f"config file `{config_path}` not found", hint="run `accelwiz init` to write one, or pass --config FILE"
        )
    from accelwiz.rules.context import LaunchFacts
    from accelwiz.rules.engine import CheckResult, build_units, check_unit

    loaded = CheckResult()
    units = build_units([config_path], loaded)
    if loaded.input_errors:
        raise loaded.input_errors[0]
    unit = next((u for u in units if u.accelerate is not None), None)
    if unit is None:
        raise UsageError(
            f"{config_path} is a DeepSpeed config, not an Accelerate config",
            hint="pass the Accelerate YAML; it names the JSON in deepspeed_config.deepspeed_config_file",
        )
    spec = LaunchSpec.from_effective(unit.effective, str(config_path))
    gpu_count = system.gpu_count if system is not None and here else None
    env = environment_changes(spec, gpu_count=gpu_count, environ=os.environ if environ is None else environ,
                              build=torch_build())
    # The plan beside the YAML: its workload for the memory rules and, for other machines, its system; its CPU
    # machines get the CPU fallback in their node commands and sbatch script (launch/environment.py).
    from accelwiz.launch.environment import portable_changes
    from accelwiz.plan_file import find_plan, load_plan, plan_model, plan_system

    found = find_plan(config_path)
    plan = load_plan(found) if found is not None else None
    model = plan_model(plan)[0] if plan is not None else None
    if plan is not None and not here and system is None:
        system = plan_system(plan)
    launched_env = env if here else portable_changes(spec, env, cpu_nodes=plan is not None
                                                     and plan.system.gpus_per_machine == 0)
    launch = LaunchFacts(
        supplies_rendezvous=not here,
        cpu_fallback=any(c.name == "ACCELERATE_USE_CPU" and c.value == "true" for c in launched_env),
        builtin_trainer=builtin_trainer,
    )
    checked = check_unit(unit.documents, system=system, launch=launch, deepspeed_reference=unit.deepspeed_reference,
                         training_args=training_args,  # a Trainer script's arguments: the AW7xx rules
                         plan=plan, model=model)
    return Preflight(config_path, checked.context, checked.diagnostics, spec, env, checked.handled)


def render_summary(checked: Preflight) -> str:
    """One screen: the launch topology in a line, then the effective values and where each comes from."""
    spec = checked.spec
    parts = [spec.distributed_type]
    if spec.zero_stage is not None and spec.uses_deepspeed:
        parts.append(f"ZeRO-{spec.zero_stage}")
    machines = f"{spec.num_machines} machine{'s' if spec.num_machines != 1 else ''}"
    parts.append(f"{spec.num_processes} process{'es' if spec.num_processes != 1 else ''} on {machines}")
    # The precision the run will use: with a DeepSpeed JSON that is the JSON's fp16/bf16, not the YAML's key.
    precision = checked.unit.effective.mixed_precision.value or spec.mixed_precision
    parts.append(f"mixed_precision {precision}")
    lines = [f"run: {checked.config_path}: " + ", ".join(parts)]
    from accelwiz.rules.report import render_explanation

    explanation = render_explanation(checked.unit)
    if explanation:
        lines.append(explanation)
    return "\n".join(lines)
