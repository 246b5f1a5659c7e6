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
    reference = unit.deepspeed_reference
    if reference is not None and unit.deepspeed is None:
        raise InputError(f"{path} names the DeepSpeed JSON `{reference.written}`, which was not found",
                         hint="run from the folder `accelerate launch` runs in, or fix deepspeed_config_file")
    return unit
