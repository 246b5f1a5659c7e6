"""The unit `accelwiz convert` reads: the Accelerate YAML and the DeepSpeed JSON it names, as `check` groups them
(their effective values come from accelwiz/effective.py through the check context)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.errors import InputError

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


def load_unit(path: Path) -> CheckContext:
    """The YAML's unit; an InputError (exit 2) when it names a DeepSpeed JSON that is not there, since a
    conversion without the JSON's stage, offload and precision would invent them."""
    from accelwiz.rules.engine import CheckResult, build_units

    result = CheckResult()
    units = build_units([path], result)
    if result.input_errors:
        raise result.input_errors[0]
    unit = units[0]
    _require_deepspeed_settings(unit, path)
    reference = unit.deepspeed_reference
    if reference is not None and unit.deepspeed is None:
        raise InputError(f"{path} names the DeepSpeed JSON `{reference.written}`, which was not found",
                         hint="run from the folder `accelerate launch` runs in, or fix deepspeed_config_file")
    return unit


def _require_deepspeed_settings(unit: CheckContext, path: Path) -> None:
    """The YAML's DeepSpeed settings must be readable: a `deepspeed_config` that is not a mapping
    (`deepspeed_config: zero3`) or an empty `deepspeed_config_file` would convert as defaults (ZeRO-2, no
    offload) that the run never uses; accelerate itself fails on both."""
    yaml = unit.accelerate
    if yaml is None or not yaml.has("deepspeed_config"):
        return
    section = yaml.get("deepspeed_config")
    if not isinstance(section, dict):
        raise InputError(f"{path}: `deepspeed_config` is {type(section).__name__} {section!r}, not a mapping of "
                         "settings; there is nothing to convert", hint="write it as `deepspeed_config:` with "
                         "`zero_stage: 3` (or the other settings) indented below; `accelwiz check` explains")
    written = section.get("deepspeed_config_file")
    if isinstance(written, str) and not written.strip():
        raise InputError(f"{path}: `deepspeed_config_file` is {written!r}; accelerate opens it as a file name and "
                         "fails", hint="name the DeepSpeed JSON, or remove the key")
