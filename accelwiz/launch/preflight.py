"""Before launching: load and check the config with the real rule engine, and summarise what will run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.errors import InputError, UsageError
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

    @property
    def errors(self) -> list[Diagnostic]:
        from accelwiz.rules.diagnostic import Severity

        return [d for d in self.diagnostics if d.severity is Severity.ERROR]


def preflight(config_path: Path, *, system: MachineProfile | None) -> Preflight:
    """Check the config as `accelwiz check` would (every rule); raises on a missing or unreadable config."""
    if not config_path.is_file():
        raise InputError(
            f"config file `{config_path}` not found", hint="run `accelwiz init` to write one, or pass --config FILE"
        )
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    result = check_paths([config_path], select_rules(), system=system)
    if result.input_errors:
        raise result.input_errors[0]
    unit = next((u for u in result.units if u.accelerate is not None), None)
    if unit is None:
        raise UsageError(
            f"{config_path} is a DeepSpeed config, not an Accelerate config",
            hint="pass the Accelerate YAML; it names the JSON in deepspeed_config.deepspeed_config_file",
        )
    return Preflight(config_path, unit, result.diagnostics, LaunchSpec.from_documents(unit.accelerate, unit.deepspeed))


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
