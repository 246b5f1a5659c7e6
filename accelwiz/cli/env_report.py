"""The `accelwiz env` report: everything a bug report about a distributed run needs, as Markdown. It is the
command's use case, so it sits with the command, above the rule engine it runs and the probe it renders.

Unlike `accelerate env`, it lists every GPU (not only GPU 0), the P2P topology, the disk, and for each config
given the settings that decide the run plus the `accelwiz check` verdict on this machine.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelwiz import __version__
from accelwiz.probe.model import MachineProfile
from accelwiz.probe.render import markdown_table, profile_markdown


def env_report(profile: MachineProfile, configs: Sequence[Path] = ()) -> str:
    """The whole report: versions, packages, machine, then one section per config unit."""
    sections = ["## accelwiz env", markdown_table(["", ""], _platform_rows()),
                "### Packages", markdown_table(["package", "version"], _package_rows(profile)),
                "### Machine", profile_markdown(profile)]
    if configs:
        sections += ["### Configs", _configs_markdown(profile, configs)]
    return "\n\n".join(sections) + "\n"


def _platform_rows() -> list[tuple[str, str]]:
    libc = " ".join(part for part in platform.libc_ver() if part)
    return [("accelwiz", __version__),
            ("Python", f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})"),
            ("OS", f"{platform.platform()}{f' ({libc})' if libc else ''}")]


def _package_rows(profile: MachineProfile) -> list[tuple[str, str]]:
    return [(name, version or "not installed") for name, version in profile.packages.items()]


def _configs_markdown(profile: MachineProfile, configs: Sequence[Path]) -> str:
    from accelwiz.rules.engine import check_with_plans
    from accelwiz.rules.registry import select_rules
    from accelwiz.rules.report import summary

    # as `accelwiz check --system local` sees them: with the plan beside each YAML (its workload)
    result = check_with_plans(list(configs), select_rules(), system=profile)
    parts = [f"- could not read: {error.message}" for error in result.input_errors]
    for unit in result.units:
        files = [d.name for d in unit.documents]
        found = [d for d in result.diagnostics if d.file in files]
        codes = ", ".join(sorted({d.code for d in found}))
        verdict = summary(found).rstrip(".") + (f" ({codes})" if codes else "")
        rows = [*_unit_rows(unit), ("`accelwiz check`", verdict)]
        parts.append(f"#### {' + '.join(files)}\n\n" + markdown_table(["", ""], rows))
    return "\n\n".join(parts)


def _unit_rows(unit: Any) -> list[tuple[str, str]]:
    """The settings that decide the shape of the run, as the run will use them (accelwiz/effective.py, the one
    reader), with where each comes from; a value written with a type the schema refuses is shown as written."""
    effective = unit.effective
    rows = [(label, _shown(getattr(effective, name))) for label, name in (
        ("distributed type", "distributed_type"), ("processes", "num_processes"), ("machines", "num_machines"),
        ("mixed precision", "mixed_precision"))]
    if unit.deepspeed is not None or effective.distributed_type.value == "DEEPSPEED":
        rows.append(("ZeRO stage", _shown(effective.zero_stage)))
    if effective.distributed_type.value == "FSDP":
        rows.append(("FSDP version", _shown(effective.fsdp_version)))
    return rows


def _shown(value: Any) -> str:
    if value.invalid:
        return f"{value.written!r} (invalid)"
    if value.value is None:
        return "-"
    return f"{value.value} ({SOURCE_NAMES.get(value.source, value.source)})"


SOURCE_NAMES = {"yaml": "YAML", "json": "DeepSpeed JSON"}
