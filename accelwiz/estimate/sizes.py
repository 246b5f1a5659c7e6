"""Memory sizes in and out: '80GiB', '80GB', '81920MiB' -> bytes; bytes -> '61.2 GiB'."""

from __future__ import annotations

import re

from accelwiz.errors import UsageError

_UNITS = {
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.I)


def parse_size(text: str) -> int:
    """'80GiB' -> 85899345920; '80GB' -> 80e9 (SI, as vendors print); '81920MiB'; '80B' for bytes.

    A bare number is refused: `--gpu-memory 80` means 80 GiB to a person and 80 bytes to a parser."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else None
    if match and unit == "":
        raise UsageError(f"size `{text}` has no unit", hint=f"write {match.group(1)}GiB or {match.group(1)}GB")
    if not match or unit not in _UNITS:
        raise UsageError(f"cannot read size `{text}`", hint="write e.g. 80GiB, 80GB or 81920MiB")
    value = round(float(match.group(1)) * _UNITS[unit])
    if value <= 0:
        raise UsageError(f"size must be positive (got `{text}`)", hint="write e.g. 80GiB")
    return value


def gib(value: float) -> str:
    """Bytes as GiB with one decimal: '61.2 GiB'."""
    return f"{value / 2**30:.1f} GiB"
