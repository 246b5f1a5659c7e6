"""The library versions a finding is about, so that a rule says only what is true for the stack that will run.

The target machine's versions when `--system` names a profile that lists them (a probe lists every tracked
package; a preset none), else this environment's, read from package metadata (`importlib.metadata`, through
accelwiz.probe.packages): importing transformers or deepspeed to ask costs seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.probe.packages import TRACKED, distribution_version
from accelwiz.probe.versions import version_at_least

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


def stack_version(ctx: CheckContext, package: str) -> str | None:
    """The version of `package` the run will use; None when it is not installed (or the profile says so)."""
    if ctx.system is not None and ctx.system.package_known(package):
        return ctx.system.packages[package] or None
    return distribution_version(*TRACKED.get(package, (package,)))


def stack_at_least(ctx: CheckContext, package: str, version: str) -> bool | None:
    """Whether the stack's `package` is `version` or newer; None when it is absent or its version unreadable."""
    have = stack_version(ctx, package)
    return None if have is None else version_at_least(have, version)
