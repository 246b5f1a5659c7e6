"""AW014: a renamed key nothing reads, whose value is what the run uses anyway: dead, but harmless.
AW017: an unknown top-level key of a DeepSpeed JSON, which DeepSpeed ignores.

AW002 reports a key nothing reads as an error because its value never takes effect. When the value it asks for
is exactly what runs without it (`fsdp_backward_prefetch_policy: NO_PREFETCH`, transformers#35234), ignoring it
changes nothing: the finding is a warning to delete the dead key, and AW002 leaves it to this rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from accelwiz.config.validate import SchemaIssue
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


def ignored_by_deepspeed(role: str, issue: SchemaIssue) -> bool:
    """An unknown key DeepSpeed reads past: at the top of its JSON, and not a near miss of a key it knows.

    `DeepSpeedConfig._initialize_params` (deepspeed/runtime/config.py) reads the known top-level keys with
    `get_scalar_param` & co. and refuses only `_REMOVED_TOP_LEVEL_CONFIG_KEYS` (AW010); accelerate's and the
    Trainer's `HfDeepSpeedConfig` read single keys with `.get`. The nested sections built as pydantic models with
    `extra="forbid"` (zero_optimization, fp16, bf16, ...) refuse an unknown key: those stay AW001's errors, and
    so does a near miss (`zero_optimisation`), whose intended setting silently falls back to its default."""
    return role == "deepspeed" and issue.kind == "unknown-key" and len(issue.path) == 1 and issue.resembles is None


@rule("AW017", "ignored-unknown-key", Severity.WARNING, fix="Remove the key: DeepSpeed does not read it")
def ignored_unknown_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a top-level key of the DeepSpeed JSON that DeepSpeed does not know and that is no misspelling of a
    key it knows, such as `cuda_visible_devices`.

    ## Why is this bad?
    DeepSpeed ignores unknown top-level keys, so the run starts, but the key does nothing: GPUs are chosen by
    `CUDA_VISIBLE_DEVICES` or the launcher's `--include`, never by the JSON. A misspelled known key
    (`zero_optimisation`) is AW001's error instead: the setting it meant falls back to its default.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "cuda_visible_devices": "0,1"}
    ```
    Use instead: set `CUDA_VISIBLE_DEVICES=0,1` in the environment and remove the key.
    ```json
    {"train_micro_batch_size_per_gpu": 4}
    ```
    """
    for role, issues in ctx.schema.items():
        for issue in issues:
            if ignored_by_deepspeed(role, issue):
                yield Finding("deepspeed", issue.path, f"unknown key `{issue.path[0]}`: DeepSpeed ignores unknown "
                              "top-level keys, so it has no effect")
