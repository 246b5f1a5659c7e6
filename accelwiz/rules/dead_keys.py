"""AW014: a renamed key nothing reads, whose value is what the run uses anyway: dead, but harmless.

AW002 reports a key nothing reads as an error because its value never takes effect. When the value it asks for
is exactly what runs without it (`fsdp_backward_prefetch_policy: NO_PREFETCH`, transformers#35234), ignoring it
changes nothing: the finding is a warning to delete the dead key, and AW002 leaves it to this rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from accelwiz.document import KeyPath
from accelwiz.effective_fsdp import backward_prefetch
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

# a renamed key accelerate no longer reads -> (the effective value its new name sets, how that name is read)
RENAMED: dict[KeyPath, tuple[str, Callable[[Any], Any]]] = {
    ("fsdp_config", "fsdp_backward_prefetch_policy"): ("fsdp_backward_prefetch", backward_prefetch),
}


def harmless(ctx: CheckContext, path: KeyPath) -> str | None:
    """The value both the dead key at `path` and the run use, when they agree; None otherwise."""
    if path not in RENAMED or ctx.accelerate is None:
        return None
    setting, read = RENAMED[path]
    runs = getattr(ctx.effective, setting)
    asked = read(ctx.accelerate.get(*path))  # the dead key's value, read as its live name would be
    return asked if runs.is_set and asked == runs.value else None


@rule("AW014", "dead-key-without-effect", Severity.WARNING, fix="Remove the key: the run does this anyway")
def dead_key_without_effect(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a renamed key that accelerate no longer reads whose value is what the run uses anyway, such as
    `fsdp_backward_prefetch_policy: NO_PREFETCH` (no backward prefetch is accelerate's default).

    ## Why is this bad?
    Nothing reads the key, so it only looks like a setting: changing it later changes nothing. Here that is
    harmless today, which is why it is a warning; a value other than what runs is AW002's error.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_backward_prefetch_policy: NO_PREFETCH
    ```
    Use instead: remove the key (or write `fsdp_backward_prefetch` to ask for prefetching).
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_backward_prefetch: NO_PREFETCH
    ```
    """
    for path in RENAMED:
        value = harmless(ctx, path)
        if value is not None:
            new_name = RENAMED[path][0]
            yield Finding("accelerate", path, f"`{'.'.join(map(str, path))}` is never read (renamed to "
                                              f"{new_name}); the run uses {value} anyway")
