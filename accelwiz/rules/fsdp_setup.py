"""AW306-AW309: how FSDP loads, wraps and checkpoints the model: combinations the plugin refuses, and a wrap policy
that leaves the whole model one FSDP unit. The FSDP version's own settings (AW301-AW305) are in `fsdp.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.fsdp import fsdp_view, ram_efficient_loading
from accelwiz.rules.rule import rule


@rule("AW306", "ram-efficient-loading-without-sync", Severity.ERROR,
      fix="Set fsdp_sync_module_states: true, or fsdp_cpu_ram_efficient_loading: false")
def ram_efficient_loading_without_sync(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_sync_module_states: false` while `fsdp_cpu_ram_efficient_loading` is on (its default).

    ## Why is this bad?
    With RAM-efficient loading only rank 0 reads the checkpoint and the others must receive the weights by
    syncing module states. `accelerate launch` refuses the combination for both FSDP versions: "When using
    `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`".

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_sync_module_states: false
    ```
    Use instead: `fsdp_sync_module_states: true`, or also set `fsdp_cpu_ram_efficient_loading: false`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_sync_module_states: true
    ```
    """
    view = fsdp_view(ctx)
    found = view.fsdp_sync_module_states if view else None
    if view and found and found.strict is False and ram_efficient_loading(ctx):
        yield Finding("accelerate", found.path,
                      "fsdp_cpu_ram_efficient_loading is on (the default) but fsdp_sync_module_states "
                      "is false")


@rule("AW307", "size-based-wrap-disabled", Severity.ERROR,
      fix="Set fsdp_min_num_params to a positive size, e.g. 100000000")
def size_based_wrap_disabled(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FSDP1 with `fsdp_auto_wrap_policy: SIZE_BASED_WRAP` and `fsdp_min_num_params: 0`.

    ## Why is this bad?
    accelerate silently replaces the policy with "no wrapping" when the threshold is 0, so the whole model
    becomes one FSDP unit and every parameter is gathered at once: no memory saving over DDP.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: SIZE_BASED_WRAP
      fsdp_min_num_params: 0
    ```
    Use instead: `fsdp_min_num_params: 100000000`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: SIZE_BASED_WRAP
      fsdp_min_num_params: 100000000
    ```
    """
    view = fsdp_view(ctx)
    if view is None or view.fsdp_version.strict != 1:
        return
    policy, threshold = view.fsdp_auto_wrap_policy, view.fsdp_min_num_params  # as the plugin reads them
    if policy.value == "SIZE_BASED_WRAP" and threshold.value == 0:
        yield Finding("accelerate", threshold.path,
                      "fsdp_min_num_params 0 turns SIZE_BASED_WRAP into no wrapping")


@rule("AW308", "fsdp-no-wrap", Severity.WARNING,
      fix="Use fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP (or SIZE_BASED_WRAP)")
def fsdp_no_wrap(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_auto_wrap_policy: NO_WRAP`, and an `fsdp_config` that names no policy at all.

    ## Why is this bad?
    Without wrapping the whole model is a single FSDP unit: all parameters are gathered for the forward and
    backward pass, so peak memory is that of the full model, as with DDP, plus the sharding overhead.
    An unwritten policy is the same: `accelerate launch` exports FSDP_AUTO_WRAP_POLICY only where the YAML names
    one, and the plugin then reads `os.environ.get("FSDP_AUTO_WRAP_POLICY", "NO_WRAP")` (accelerate 1.16
    utils/launch.py, utils/dataclasses.py). A YAML without `fsdp_config` is left alone: its plugin is built
    elsewhere (axolotl, or a script's own FullyShardedDataParallelPlugin), as is a Trainer's `--fsdp`, whose own
    default is TRANSFORMER_BASED_WRAP.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: NO_WRAP
    ```
    Use instead: `fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
    ```
    """
    view = fsdp_view(ctx)
    found = view.fsdp_auto_wrap_policy if view else None
    if found and found.value == "NO_WRAP":  # written: the plugin upper-cases it
        yield Finding("accelerate", found.path, "NO_WRAP makes the whole model one FSDP unit")
    elif found and found.value is None and ctx.accelerate.section("fsdp_config"):
        yield Finding("accelerate", ("fsdp_config",), "fsdp_config names no fsdp_auto_wrap_policy: accelerate "
                      "defaults to NO_WRAP, the whole model one FSDP unit")


@rule("AW309", "activation-checkpointing-offload-requirements", Severity.ERROR,
      fix="Enable fsdp_activation_checkpointing and use fsdp_version: 2, or drop the offload")
def activation_checkpointing_offload_requirements(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_activation_checkpointing_offload: true` without `fsdp_activation_checkpointing: true` or
    without `fsdp_version: 2`.

    ## Why is this bad?
    The plugin raises "`activation_checkpointing_offload=True` requires `activation_checkpointing=True`"
    (or "requires `fsdp_version=2`") in every process when `Accelerator()` is built.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_activation_checkpointing_offload: true
    ```
    Use instead: also set `fsdp_activation_checkpointing: true`.
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
      fsdp_activation_checkpointing: true
    ```
    """
    view = fsdp_view(ctx)
    found = view.fsdp_activation_checkpointing_offload if view else None
    if view is None or found is None or found.value is not True:  # str_to_bool: "True" is true
        return
    if view.fsdp_activation_checkpointing.value is not True:
        yield Finding("accelerate", found.path, "activation offload needs fsdp_activation_checkpointing: true")
    elif view.fsdp_version.strict != 2:
        yield Finding("accelerate", found.path, "activation offload needs fsdp_version: 2")
