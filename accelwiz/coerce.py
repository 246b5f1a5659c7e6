"""How accelerate 1.15 and DeepSpeed 0.19.8 read one config value: the only place that turns a written value
into an int, a float, a flag, an offload device or an enum member.

Every function returns the value the libraries would use, or None when they would not read it (a type error
the schema rules report). `exact_*` says whether the written value already has the schema's type, so a rule can
stay silent where the schema rules speak.

The readings, from the libraries' source:
- int: a bool is never an int (YAML `true` is not 1); a numeric *string* ("8") is not an int either: accelerate
  copies YAML values onto its argparse namespace unconverted (`num_processes: "8"` then fails in `//`), and
  DeepSpeed reads its top-level batch keys raw (`get_scalar_param`), so "8" breaks the batch arithmetic;
- flag: one set of words for both libraries. accelerate exports flags as `str(v).lower()` and reads them back
  with `str_to_bool` (y, yes, t, true, on, 1 / n, no, f, false, off, 0); DeepSpeed's lax pydantic accepts the
  same words, in any case (but not padded with spaces), and the numbers 1 and 0;
- device: DeepSpeed's `OffloadDeviceEnum` is exactly "none", "cpu" or "nvme" (case matters, "CPU" is refused);
  an Accelerate YAML's `offload_*_device` is lower-cased by the DeepSpeed launcher first
  (`str(args.offload_optimizer_device).lower()` in utils/launch.py), so there "NONE" is "none";
- enum: case-insensitive only where the launcher changes the case itself: `mixed_precision` is lower-cased
  (`PrecisionType(args.mixed_precision.lower())`) and the FSDP sharding strategy upper-cased
  (`ShardingStrategy[value.upper()]`); `distributed_type` is matched exactly (`DistributedType(value)`).

The one leniency: **an integral float is an int** (`5e8`, `2.0`). YAML and JSON writers emit `5e8` for bucket
sizes, DeepSpeed's pydantic models accept it as 500000000 in lax mode, and a float that is a whole number has
only one meaning; a fractional float (`2.5`) is still not an int.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

TRUE_WORDS = frozenset({"y", "yes", "t", "true", "on", "1"})
FALSE_WORDS = frozenset({"n", "no", "f", "false", "off", "0"})
DEVICES = ("none", "cpu", "nvme")


def integer(value: Any) -> int | None:
    """An integer as the libraries read it: ints, and integral floats (the one leniency); never bools."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def exact_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def number(value: Any) -> float | None:
    """A float (ints included, bools not); NaN and infinities are not numbers a config can use."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def flag(value: Any) -> bool | None:
    """A flag as accelerate's `str_to_bool` and DeepSpeed's pydantic read it; None when neither reads it."""
    if isinstance(value, bool):
        return value
    if integer(value) in (0, 1):  # DeepSpeed's pydantic takes 1, 0 (and 1.0, 0.0: the integral-float leniency)
        return bool(integer(value))
    if isinstance(value, str):
        word = value.lower()  # no stripping: " yes" is refused by both str_to_bool and pydantic
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None


def exact_flag(value: Any) -> bool:
    return isinstance(value, bool)


def device(value: Any) -> str | None:
    """An offload device: exactly "none", "cpu" or "nvme"."""
    return value if isinstance(value, str) and value in DEVICES else None


def launched_device(value: Any) -> str | None:
    """An Accelerate YAML's offload device: lower-cased by the launcher, then exactly "none", "cpu" or "nvme"."""
    return device(value.lower()) if isinstance(value, str) else None


def text(value: Any) -> str | None:
    """A non-empty string, stripped."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def choice(value: Any, choices: Iterable[str], *, case: str = "exact") -> str | None:
    """`value` as one of `choices`; `case` is "lower" or "upper" where the launcher changes the case itself."""
    if not isinstance(value, str):
        return None
    written = {"lower": value.lower, "upper": value.upper}.get(case, lambda: value)()
    return written if written in set(choices) else None


def sharding_strategy(value: Any) -> str | None:
    """An FSDP1 sharding strategy as the plugin resolves it: a name in any case, or its number 1-5."""
    from accelwiz.vocab import SHARDING_STRATEGIES

    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 1 <= value <= len(SHARDING_STRATEGIES):
        return SHARDING_STRATEGIES[value - 1]
    if isinstance(value, str) and value.upper() in SHARDING_STRATEGIES:
        return value.upper()
    return None
