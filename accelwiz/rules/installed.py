"""The library versions a finding is about, so that a rule says only what is true for the stack that will run.

`check --stack NAME==VERSION` where it names the library; the target machine's versions when `--system` names a
profile that lists them (a probe lists every tracked
package; a preset none), else this environment's, read from package metadata (`importlib.metadata`, through
accelwiz.probe.packages): importing transformers or deepspeed to ask costs seconds. Which of the two is
resolution/stack.py's `package_version`, the one owner: the memory rules' workload takes its `stack` from the
same profile (`with_profile_stack`) and the same --stack, so a rule and the estimate beside it speak of the same
versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.probe.versions import version_at_least
from accelwiz.resolution.sourced import Sourced
from accelwiz.resolution.stack import KNOWN, Stack, package_version, stack_from_flags

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


def stack_version(ctx: CheckContext, package: str) -> str | None:
    """The version of `package` the run will use; None when it is not installed (or the profile says so)."""
    named = _flagged(ctx, package)
    if named is not None:
        return named
    return package_version(package, ctx.system.packages if ctx.system is not None else None)


def _flagged(ctx: CheckContext, package: str) -> str | None:
    """`check --stack NAME==VERSION`'s version of `package` (a library it names), else None: a finding speaks of
    the stack the memory rules estimate with."""
    given = ctx.workload_flags.get("stack") if ctx.workload_flags else None
    if not given or package not in KNOWN:
        return None
    stack = given.value if isinstance(given, Sourced) else stack_from_flags(given, Stack())  # only what it names
    version = getattr(stack, package)
    return ".".join(map(str, version)) if version is not None else None


def stack_at_least(ctx: CheckContext, package: str, version: str) -> bool | None:
    """Whether the stack's `package` is `version` or newer; None when it is absent or its version unreadable."""
    have = stack_version(ctx, package)
    return None if have is None else version_at_least(have, version)
