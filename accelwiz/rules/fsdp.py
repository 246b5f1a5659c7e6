"""AW301-AW305: FSDP settings (FSDP1 and FSDP2) that accelerate refuses or silently ignores.

FSDP settings reach the workers as FSDP_* environment variables that `FullyShardedDataParallelPlugin`
reads in its `__post_init__` (accelerate 1.15, `utils/dataclasses.py`). FSDP1 and FSDP2 read different
subsets of them, and the launcher always exports its own defaults (for example
FSDP_SHARDING_STRATEGY=FULL_SHARD), which is what makes several settings silently ineffective.

How the model is loaded, wrapped and checkpointed (AW306-AW309) is in `fsdp_setup.py`; N-D parallelism and
Megatron-LM sizes (AW310-AW315) in `parallelism.py`; fp8 and dynamo settings (AW420-AW425) in
`precision_settings.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz import coerce
from accelwiz.document import KeyPath
from accelwiz.effective import EffectiveConfig, fsdp_entry
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

# Options that FSDP2 (`fully_shard`) never reads from the environment, or reads and then drops.
FSDP2_IGNORED = ("fsdp_backward_prefetch", "fsdp_forward_prefetch", "fsdp_use_orig_params",
                 "fsdp_sync_module_states")
# What `reshard_after_forward: <bool>` means as an FSDP1 strategy.
BOOL_AS_STRATEGY = {True: "FULL_SHARD", False: "SHARD_GRAD_OP"}


def fsdp_view(ctx: CheckContext) -> EffectiveConfig | None:
    """The effective values of this unit when it runs FSDP with a valid fsdp_version (either spelling)."""
    if ctx.accelerate is None:
        return None
    effective = ctx.effective
    return effective if effective.is_fsdp and effective.fsdp_version.strict is not None else None


def _entry(ctx: CheckContext, name: str) -> tuple[KeyPath, Any] | None:
    """(path, written value) of an fsdp_config key in either spelling."""
    return fsdp_entry(ctx.accelerate, name)


@rule("AW301", "fsdp2-ignored-sharding-strategy", Severity.ERROR,
      fix="Remove fsdp_sharding_strategy; with FSDP2 use fsdp_reshard_after_forward (false = SHARD_GRAD_OP)")
def fsdp2_ignored_sharding_strategy(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_version: 2` with an `fsdp_sharding_strategy` other than FULL_SHARD.

    ## Why is this bad?
    FSDP2 never reads the sharding strategy: the run is fully sharded whatever the file says
    (accelerate 1.15, N8). `SHARD_GRAD_OP` corresponds to `fsdp_reshard_after_forward: false`, `NO_SHARD` to
    plain DDP (`MULTI_GPU`), and `HYBRID_SHARD` to `parallelism_config_dp_replicate_size` > 1.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_sharding_strategy: SHARD_GRAD_OP
    ```
    Use instead: `fsdp_reshard_after_forward: false`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_reshard_after_forward: false
    ```
    """
    view = fsdp_view(ctx)
    found = _entry(ctx, "fsdp_sharding_strategy") if view and view.fsdp_version.strict == 2 else None
    name = coerce.sharding_strategy(found[1]) if found else None
    if found and name and name != "FULL_SHARD":
        yield Finding("accelerate", found[0],
                      f"FSDP2 ignores the sharding strategy {name}: it runs FULL_SHARD")


@rule("AW302", "fsdp2-obsolete-option", Severity.WARNING, fix="Remove the option from the FSDP2 config")
def fsdp2_obsolete_option(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FSDP1 options in an `fsdp_version: 2` config: `fsdp_sharding_strategy: FULL_SHARD`,
    `fsdp_backward_prefetch`, `fsdp_forward_prefetch`, `fsdp_use_orig_params`, `fsdp_sync_module_states`.

    ## Why is this bad?
    FSDP2 does not read them (backward prefetch is dropped with a warning; forward prefetch, which raises
    when passed to the plugin in Python, is silently ignored from the file). They suggest behaviour the run
    does not have, typically after converting an FSDP1 config by changing only the version.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_forward_prefetch: true
    ```
    Use instead: remove `fsdp_forward_prefetch`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
    ```
    """
    view = fsdp_view(ctx)
    if view is None or view.fsdp_version.strict != 2:
        return
    strategy = _entry(ctx, "fsdp_sharding_strategy")
    if strategy and coerce.sharding_strategy(strategy[1]) == "FULL_SHARD":
        yield Finding("accelerate", strategy[0], "FSDP2 does not read fsdp_sharding_strategy")
    for name in FSDP2_IGNORED:
        found = _entry(ctx, name)
        if found is None or found[1] is None:
            continue
        if name == "fsdp_sync_module_states" and found[1] is False and ram_efficient_loading(ctx):
            continue  # AW306: the launcher refuses this combination before FSDP2 could ignore it
        yield Finding("accelerate", found[0], f"FSDP2 does not read {name}")


@rule("AW303", "fsdp2-local-state-dict", Severity.ERROR,
      fix="Use fsdp_state_dict_type: SHARDED_STATE_DICT (or FULL_STATE_DICT) with FSDP2")
def fsdp2_local_state_dict(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_state_dict_type: LOCAL_STATE_DICT` with `fsdp_version: 2`.

    ## Why is this bad?
    The plugin raises "FSDP2 does not support LOCAL_STATE_DICT" in every process when `Accelerator()` is
    built.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_state_dict_type: LOCAL_STATE_DICT
    ```
    Use instead: `fsdp_state_dict_type: SHARDED_STATE_DICT`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_state_dict_type: SHARDED_STATE_DICT
    ```
    """
    view = fsdp_view(ctx)
    found = view.fsdp_state_dict_type if view and view.fsdp_version.strict == 2 else None
    if found and found.value == "LOCAL_STATE_DICT":  # upper-cased, or its number 2, as the plugin reads it
        yield Finding("accelerate", found.path, "FSDP2 does not support LOCAL_STATE_DICT")


@rule("AW304", "fsdp2-strategy-in-reshard-after-forward", Severity.ERROR,
      fix="Write fsdp_reshard_after_forward as true or false with FSDP2")
def fsdp2_strategy_in_reshard_after_forward(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a sharding-strategy name such as `FULL_SHARD` in `fsdp_reshard_after_forward` with
    `fsdp_version: 2`.

    ## Why is this bad?
    FSDP1 takes a strategy name there, FSDP2 a boolean: the plugin fails with `ValueError: invalid truth
    value full_shard` when `Accelerator()` is built. It happens when an FSDP1 config is switched to version 2.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_reshard_after_forward: FULL_SHARD
    ```
    Use instead: `fsdp_reshard_after_forward: true` (`false` for SHARD_GRAD_OP behaviour).
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_reshard_after_forward: true
    ```
    """
    view = fsdp_view(ctx)
    found = _entry(ctx, "fsdp_reshard_after_forward") if view and view.fsdp_version.strict == 2 else None
    name = coerce.sharding_strategy(found[1]) if found and isinstance(found[1], str) else None
    if found and name:
        yield Finding("accelerate", found[0],
                      f"FSDP2 needs a boolean fsdp_reshard_after_forward, not the strategy {name}",
                      fix=f"write `fsdp_reshard_after_forward: {str(name == 'FULL_SHARD').lower()}`")


@rule("AW305", "fsdp1-reshard-after-forward-ignored", Severity.ERROR,
      fix="Put the strategy in fsdp_sharding_strategy: FSDP1 ignores fsdp_reshard_after_forward")
def fsdp1_reshard_after_forward_ignored(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an FSDP1 config whose `fsdp_reshard_after_forward` asks for a different strategy than the one the
    run uses: `fsdp_sharding_strategy`, or FULL_SHARD when that is absent.

    ## Why is this bad?
    `accelerate config` writes the FSDP1 strategy as `fsdp_reshard_after_forward: SHARD_GRAD_OP`, but
    `accelerate launch` always exports `FSDP_SHARDING_STRATEGY` (default FULL_SHARD), and the plugin reads
    `fsdp_reshard_after_forward` only when no sharding strategy is set. The run is silently FULL_SHARD (N1).
    A value naming the strategy that is used anyway (e.g. FULL_SHARD, as in trl's `fsdp1.yaml`) is harmless.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 1
      fsdp_reshard_after_forward: SHARD_GRAD_OP
    ```
    Use instead: `fsdp_sharding_strategy: SHARD_GRAD_OP`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 1
      fsdp_sharding_strategy: SHARD_GRAD_OP
    ```
    """
    view = fsdp_view(ctx)
    found = _entry(ctx, "fsdp_reshard_after_forward") if view and view.fsdp_version.strict == 1 else None
    if view is None or found is None:
        return
    wanted = BOOL_AS_STRATEGY.get(found[1]) if isinstance(found[1], bool) else coerce.sharding_strategy(found[1])
    sharding = view.fsdp_sharding  # what FSDP1 runs: fsdp_sharding_strategy, else the launcher's FULL_SHARD
    used, written = sharding.value, sharding.is_written
    if wanted and used and wanted != used:
        yield Finding("accelerate", found[0],
                      f"FSDP1 ignores fsdp_reshard_after_forward ({wanted}): the run uses {used} from "
                      f"{'fsdp_sharding_strategy' if written else 'the launcher default'}",
                      fix=f"set `fsdp_sharding_strategy: {wanted}` and remove fsdp_reshard_after_forward")


def ram_efficient_loading(ctx: CheckContext) -> bool:
    """fsdp_cpu_ram_efficient_loading as the launcher sees it (its default is on); strict: a written value
    that is not a boolean is the schema rules' finding."""
    return ctx.effective.fsdp_cpu_ram_efficient_loading.strict is True
