"""Compare package versions from a profile (`"2.5.1+cu124"`, `"0.14.5"`, `"1.0.0rc1"`).

`packaging` is used when importable (it is almost always installed); otherwise a small parser compares the
numeric release part, which is all the version gates in the hardware rules need.
"""

from __future__ import annotations

import re


def version_at_least(installed: str, required: str) -> bool | None:
    """Whether `installed` >= `required`; None when `installed` cannot be parsed (rules then stay silent)."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:
        have, need = release_tuple(installed), release_tuple(required)
        return None if have is None or need is None else _padded(have, need)
    try:
        # A pre-release of the required version (2.6.0rc1 for >= 2.6) has the feature: compare releases.
        return Version(installed).release >= Version(required).release
    except InvalidVersion:
        return None


def release_tuple(version: str) -> tuple[int, ...] | None:
    """The leading dotted numbers: "2.5.1+cu124" -> (2, 5, 1)."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _padded(have: tuple[int, ...], need: tuple[int, ...]) -> bool:
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) >= need + (0,) * (width - len(need))
