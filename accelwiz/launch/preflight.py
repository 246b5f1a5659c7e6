"""Before launching: load the config, decide the launch environment, and check the config as it will be launched
with the real rule engine (`check_unit`); then summarise what will run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError
from accelwiz.launch.environment import EnvChange, environment_changes, torch_build
from accelwiz.launch.spec import LaunchSpec, require_config

if TYPE_CHECKING:
    from accelwiz.launch.threads import Threads
    from accelwiz.probe.model import MachineProfile
    from accelwiz.resolution.run import Run
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
    run: Run | None = None  # the built-in trainer's run, resolved once (launch/run_workload.py)

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
    run: Run | None = None,
) -> Preflight:
    """Check the config as `accelwiz check` would (every rule), with the facts of this launch; raises on a missing
    or unreadable config.

    `here` is False for plans run on other machines (per-node commands, SLURM), which supply each node's rank and
    the rendezvous address and get no CPU fallback. `run` (the built-in trainer's, resolved once) is the workload
    the memory rules judge and the summary shows: the one the trainer trains.
    """
    from accelwiz.modelspec.lookup import plan_model
    from accelwiz.plan_file import plan_system
    from accelwiz.rules.engine import check_unit

    unit = _accelerate_unit(config_path)
    spec = LaunchSpec.from_effective(unit.effective, str(config_path))
    gpu_count = system.gpu_count if system is not None and here else None
    env = environment_changes(spec, gpu_count=gpu_count, environ=os.environ if environ is None else environ,
                              build=torch_build())
    # The plan beside the YAML: its workload for the memory rules and, for other machines, its system; its CPU
    # machines get the CPU fallback in their node commands and sbatch script (launch/environment.py).
    plan = _plan_beside(config_path)
    model = plan_model(plan)[0] if plan is not None else None
    workload, flags = _run_workload(run)
    if plan is not None and not here and system is None:
        system = plan_system(plan)
    checked = check_unit(unit.documents, system=system, launch=_launch_facts(spec, env, plan, here, builtin_trainer),
                         deepspeed_reference=unit.deepspeed_reference,
                         training_args=training_args,  # a Trainer script's arguments: the AW7xx rules
                         plan=plan, model=None if run is not None else model, workload=workload,
                         workload_flags=flags)
    return Preflight(config_path, checked.context, checked.diagnostics, spec, env, checked.handled, run)


def _accelerate_unit(config_path: Path) -> CheckContext:
    """The Accelerate YAML loaded as `check` loads it (with the DeepSpeed JSON it names); a missing, unreadable or
    DeepSpeed-only file is refused in one line."""
    require_config(config_path)
    from accelwiz.rules.engine import CheckResult, build_units

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
    return unit


def _plan_beside(config_path: Path) -> Any:
    """The plan `init` wrote beside the YAML, or None."""
    from accelwiz.plan_file import find_plan, load_plan

    found = find_plan(config_path)
    return load_plan(found) if found is not None else None


def _launch_facts(spec: LaunchSpec, env: list[EnvChange], plan: Any, here: bool, builtin_trainer: bool) -> Any:
    """What this launch supplies that the files do not (the rendezvous on other machines, the CPU fallback): the
    rules judge the config with these facts. Other machines get the portable environment (a plan's CPU machines
    the CPU fallback)."""
    from accelwiz.launch.environment import portable_changes
    from accelwiz.rules.context import LaunchFacts

    launched_env = env if here else portable_changes(spec, env, cpu_nodes=plan is not None
                                                     and plan.system.gpus_per_machine == 0)
    return LaunchFacts(
        supplies_rendezvous=not here,
        cpu_fallback=any(c.name == "ACCELERATE_USE_CPU" and c.value == "true" for c in launched_env),
        builtin_trainer=builtin_trainer,
    )


# the run's flags, by the names `check_unit`'s workload flags use (messages then name the flag)
_CHECK_FLAG_NAMES = {"micro_batch": "micro_batch", "seq_len": "seq_len", "gradient_checkpointing":
                     "gradient_checkpointing", "attention": "attention", "method": "regime"}


def _run_workload(run: Run | None) -> tuple[Any, dict[str, Any]]:
    """The memory rules' workload and the flags that set it, from the run the trainer will resolve."""
    if run is None:
        return None, {}
    from accelwiz.launch.run_workload import estimator_workload, run_model_spec

    flags = {check: getattr(run.workload, name).value for name, check in _CHECK_FLAG_NAMES.items()
             if getattr(run.workload, name).source == "flag"}
    return estimator_workload(run, run_model_spec(run)), flags


def render_summary(checked: Preflight, threads: Threads | None = None) -> str:
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
    if threads is not None:  # CPU training: each process's share of the cores (launch/threads.py)
        parts.append(threads.shown())
    lines = [f"run: {checked.config_path}: " + ", ".join(parts)]
    from accelwiz.rules.report import render_explanation

    unit = checked.unit
    if checked.run is not None:  # the workload rows are the run's: a flag shows as "flag", not the plan's value
        import copy

        from accelwiz.launch.run_workload import shown_effective

        unit = copy.copy(unit)
        unit.__dict__["effective"] = shown_effective(checked.unit.effective, checked.run)
    explanation = render_explanation(unit, checked.run.workload if checked.run is not None else None)
    if explanation:
        lines.append(explanation)
    return "\n".join(lines)
