"""AW3xx: FSDP, N-D parallelism and Megatron-LM sizes; AW420-AW449: fp8 and dynamo settings.

FSDP settings reach the workers as FSDP_* environment variables that `FullyShardedDataParallelPlugin`
reads in its `__post_init__` (accelerate 1.15, `utils/dataclasses.py`). FSDP1 and FSDP2 read different
subsets of them, and the launcher always exports its own defaults (for example
FSDP_SHARDING_STRATEGY=FULL_SHARD), which is what makes several settings silently ineffective.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz.config.accelerate import MULTI_DEVICE_TYPES, SHARDING_STRATEGIES, AccelerateView
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.registry import rule

# Options that FSDP2 (`fully_shard`) never reads from the environment, or reads and then drops.
FSDP2_IGNORED = ("fsdp_backward_prefetch", "fsdp_forward_prefetch", "fsdp_use_orig_params",
                 "fsdp_sync_module_states")
# What `reshard_after_forward: <bool>` means as an FSDP1 strategy.
BOOL_AS_STRATEGY = {True: "FULL_SHARD", False: "SHARD_GRAD_OP"}


def fsdp_view(ctx: CheckContext) -> AccelerateView | None:
    """The Accelerate config of this unit when it runs FSDP with a readable fsdp_version."""
    if ctx.accelerate is None:
        return None
    view = AccelerateView(ctx.accelerate)
    return view if view.is_fsdp and view.fsdp_version is not None else None


def strategy_name(value: Any) -> str | None:
    """A sharding strategy as accelerate resolves it: a name (any case) or its number 1-5."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 1 <= value <= len(SHARDING_STRATEGIES):
        return SHARDING_STRATEGIES[value - 1]
    if isinstance(value, str) and value.upper() in SHARDING_STRATEGIES:
        return value.upper()
    return None


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
    fsdp_config:
      fsdp_version: 2
      fsdp_sharding_strategy: SHARD_GRAD_OP
    ```
    Use instead: `fsdp_reshard_after_forward: false`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_sharding_strategy") if view and view.fsdp_version == 2 else None
    name = strategy_name(found[1]) if found else None
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
    fsdp_config:
      fsdp_version: 2
      fsdp_forward_prefetch: true
    ```
    Use instead: remove `fsdp_forward_prefetch`.
    """
    view = fsdp_view(ctx)
    if view is None or view.fsdp_version != 2:
        return
    strategy = view.fsdp("fsdp_sharding_strategy")
    if strategy and strategy_name(strategy[1]) == "FULL_SHARD":
        yield Finding("accelerate", strategy[0], "FSDP2 does not read fsdp_sharding_strategy")
    for name in FSDP2_IGNORED:
        found = view.fsdp(name)
        if found is None or found[1] is None:
            continue
        if name == "fsdp_sync_module_states" and found[1] is False and _ram_efficient_loading(view):
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
    fsdp_config:
      fsdp_version: 2
      fsdp_state_dict_type: LOCAL_STATE_DICT
    ```
    Use instead: `fsdp_state_dict_type: SHARDED_STATE_DICT`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_state_dict_type") if view and view.fsdp_version == 2 else None
    if found and found[1] == "LOCAL_STATE_DICT":
        yield Finding("accelerate", found[0], "FSDP2 does not support LOCAL_STATE_DICT")


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
    fsdp_config:
      fsdp_version: 2
      fsdp_reshard_after_forward: FULL_SHARD
    ```
    Use instead: `fsdp_reshard_after_forward: true` (`false` for SHARD_GRAD_OP behaviour).
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_reshard_after_forward") if view and view.fsdp_version == 2 else None
    name = strategy_name(found[1]) if found and isinstance(found[1], str) else None
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
    fsdp_config:
      fsdp_version: 1
      fsdp_reshard_after_forward: SHARD_GRAD_OP
    ```
    Use instead: `fsdp_sharding_strategy: SHARD_GRAD_OP`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_reshard_after_forward") if view and view.fsdp_version == 1 else None
    if view is None or found is None:
        return
    wanted = BOOL_AS_STRATEGY.get(found[1]) if isinstance(found[1], bool) else strategy_name(found[1])
    written = view.fsdp("fsdp_sharding_strategy")
    used = strategy_name(written[1]) if written else "FULL_SHARD"
    if wanted and used and wanted != used:
        yield Finding("accelerate", found[0],
                      f"FSDP1 ignores fsdp_reshard_after_forward ({wanted}): the run uses {used} from "
                      f"{'fsdp_sharding_strategy' if written else 'the launcher default'}",
                      fix=f"set `fsdp_sharding_strategy: {wanted}` and remove fsdp_reshard_after_forward")


def _ram_efficient_loading(view: AccelerateView) -> bool:
    """fsdp_cpu_ram_efficient_loading as the launcher sees it (its default is on)."""
    found = view.fsdp("fsdp_cpu_ram_efficient_loading")
    return True if found is None else found[1] is True


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
    fsdp_config:
      fsdp_sync_module_states: false
    ```
    Use instead: `fsdp_sync_module_states: true`, or also set `fsdp_cpu_ram_efficient_loading: false`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_sync_module_states") if view else None
    if view and found and found[1] is False and _ram_efficient_loading(view):
        yield Finding("accelerate", found[0],
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
    fsdp_config:
      fsdp_auto_wrap_policy: SIZE_BASED_WRAP
      fsdp_min_num_params: 0
    ```
    Use instead: `fsdp_min_num_params: 100000000`.
    """
    view = fsdp_view(ctx)
    if view is None or view.fsdp_version != 1:
        return
    policy, threshold = view.fsdp("fsdp_auto_wrap_policy"), view.fsdp("fsdp_min_num_params")
    if policy and policy[1] == "SIZE_BASED_WRAP" and threshold and threshold[1] == 0:
        yield Finding("accelerate", threshold[0],
                      "fsdp_min_num_params 0 turns SIZE_BASED_WRAP into no wrapping")


@rule("AW308", "fsdp-no-wrap", Severity.WARNING,
      fix="Use fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP (or SIZE_BASED_WRAP)")
def fsdp_no_wrap(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_auto_wrap_policy: NO_WRAP`.

    ## Why is this bad?
    Without wrapping the whole model is a single FSDP unit: all parameters are gathered for the forward and
    backward pass, so peak memory is that of the full model, as with DDP, plus the sharding overhead.

    ## Example
    ```yaml
    fsdp_config:
      fsdp_auto_wrap_policy: NO_WRAP
    ```
    Use instead: `fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_auto_wrap_policy") if view else None
    if found and found[1] == "NO_WRAP":
        yield Finding("accelerate", found[0], "NO_WRAP makes the whole model one FSDP unit")


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
    fsdp_config:
      fsdp_version: 2
      fsdp_activation_checkpointing_offload: true
    ```
    Use instead: also set `fsdp_activation_checkpointing: true`.
    """
    view = fsdp_view(ctx)
    found = view.fsdp("fsdp_activation_checkpointing_offload") if view else None
    if view is None or found is None or found[1] is not True:
        return
    checkpointing = view.fsdp("fsdp_activation_checkpointing")
    if checkpointing is None or checkpointing[1] is not True:
        yield Finding("accelerate", found[0], "activation offload needs fsdp_activation_checkpointing: true")
    elif view.fsdp_version != 2:
        yield Finding("accelerate", found[0], "activation offload needs fsdp_version: 2")



# --- N-D parallelism (parallelism_config) and Megatron-LM -----------------------------------------------

PARALLELISM_SIZES = ("dp_replicate", "dp_shard", "tp", "cp", "sp")


def parallelism_sizes(view: AccelerateView) -> dict[str, int] | None:
    """The parallelism sizes (1 when absent); None without parallelism_config or with a malformed size."""
    section = view.section("parallelism_config")
    if not section:
        return None
    sizes = {}
    for name in PARALLELISM_SIZES:
        value = section.get(f"parallelism_config_{name}_size", 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return None  # reported by the schema rules
        sizes[name] = value
    return sizes


def _total(sizes: dict[str, int]) -> int:
    total = 1
    for size in sizes.values():
        total *= size
    return total


def _deepspeed_sequence_parallel(view: AccelerateView, sizes: dict[str, int]) -> bool:
    backend = view.section("parallelism_config").get("parallelism_config_sp_backend", "deepspeed")
    return sizes["sp"] > 1 and backend == "deepspeed"


@rule("AW310", "parallelism-size-mismatch", Severity.ERROR,
      fix="Make the product of the parallelism sizes equal num_processes")
def parallelism_size_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `parallelism_config` whose sizes (dp_replicate x dp_shard x tp x cp x sp) multiply to something
    other than `num_processes`.

    ## Why is this bad?
    Every process raises "ParallelismConfig total_size (N) does not match num_processes (M)" when
    `Accelerator()` is built, after the launch has already started on every machine. (DeepSpeed sequence
    parallelism is exempt: DeepSpeed builds those groups itself.)

    ## Example
    ```yaml
    num_processes: 8
    parallelism_config:
      parallelism_config_dp_shard_size: 2
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 4` (4 x 2 = 8).
    """
    view = AccelerateView(ctx.accelerate) if ctx.accelerate else None
    sizes = parallelism_sizes(view) if view else None
    processes = view.integer("num_processes") if view else None
    if not sizes or processes is None or processes < 1 or _total(sizes) == 1:
        return
    if _deepspeed_sequence_parallel(view, sizes) or _total(sizes) == processes:
        return
    product = " x ".join(f"{name} {size}" for name, size in sizes.items() if size > 1)
    yield Finding("accelerate", ("parallelism_config",),
                  f"parallelism sizes multiply to {_total(sizes)} ({product}) but num_processes is "
                  f"{processes}")


@rule("AW311", "context-and-sequence-parallel", Severity.ERROR,
      fix="Use either context parallelism (cp_size) or sequence parallelism (sp_size), not both")
def context_and_sequence_parallel(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `parallelism_config_cp_size` and `parallelism_config_sp_size` both greater than 1.

    ## Why is this bad?
    `ParallelismConfig` raises "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually
    exclusive" in every process.

    ## Example
    ```yaml
    parallelism_config:
      parallelism_config_cp_size: 2
      parallelism_config_sp_size: 2
    ```
    Use instead: one of the two.
    """
    view = AccelerateView(ctx.accelerate) if ctx.accelerate else None
    sizes = parallelism_sizes(view) if view else None
    if sizes and sizes["cp"] > 1 and sizes["sp"] > 1:
        yield Finding("accelerate", ("parallelism_config",),
                      f"cp_size {sizes['cp']} and sp_size {sizes['sp']} cannot be combined")


@rule("AW312", "model-parallel-with-pure-replication", Severity.ERROR,
      fix="Shard instead of replicating: dp_shard_size > 1 (optionally with dp_replicate_size > 1 for HSDP)")
def model_parallel_with_pure_replication(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds tensor or context parallelism (tp_size or cp_size > 1) combined with pure replication
    (dp_replicate_size > 1 and dp_shard_size 1).

    ## Why is this bad?
    `ParallelismConfig` raises "Tensor/Context parallelism ... cannot be used with pure data parallelism".

    ## Example
    ```yaml
    parallelism_config:
      parallelism_config_dp_replicate_size: 2
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 2` in place of the replicate size.
    """
    view = AccelerateView(ctx.accelerate) if ctx.accelerate else None
    sizes = parallelism_sizes(view) if view else None
    model_parallel = sizes is not None and (sizes["tp"] > 1 or sizes["cp"] > 1)
    if model_parallel and sizes["dp_replicate"] > 1 and sizes["dp_shard"] == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      f"tp {sizes['tp']} / cp {sizes['cp']} with dp_replicate {sizes['dp_replicate']} and "
                      "dp_shard 1 (pure replication)")


@rule("AW313", "parallelism-unsupported-distributed-type", Severity.ERROR,
      fix="Use parallelism_config with FSDP2 (fsdp_version: 2), DeepSpeed, or MULTI_GPU")
def parallelism_unsupported_distributed_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `parallelism_config` with more than one process in it under a distributed type that cannot use
    it: FSDP1, `NO`, MULTI_CPU, XLA or MEGATRON_LM; and context parallelism (cp_size > 1) without FSDP2.

    ## Why is this bad?
    accelerate raises "ParallelismConfig is only compatible DistributedType.FSDP (version 2) or ..." or
    "Using `cp_size>1` requires FSDP2" when `Accelerator()` is built. The launcher's own check for FSDP1
    never fires for config files (it runs before the file is read, and compares the string "1" with the
    int 1; N7).

    ## Example
    ```yaml
    distributed_type: FSDP
    fsdp_config:
      fsdp_version: 1
    parallelism_config:
      parallelism_config_tp_size: 2
    ```
    Use instead: `fsdp_version: 2`.
    """
    view = AccelerateView(ctx.accelerate) if ctx.accelerate else None
    sizes = parallelism_sizes(view) if view else None
    if not sizes or _total(sizes) == 1 or view.distributed_type is None:
        return
    kind, fsdp2 = view.distributed_type, view.is_fsdp and view.fsdp_version == 2
    if view.is_fsdp and view.fsdp_version == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      "parallelism_config needs FSDP2, not fsdp_version 1")
    elif not (fsdp2 or kind in MULTI_DEVICE_TYPES or kind == "DEEPSPEED"):
        yield Finding("accelerate", ("parallelism_config",),
                      f"parallelism_config cannot be used with `distributed_type: {kind}`")
    elif sizes["cp"] > 1 and not fsdp2:
        yield Finding("accelerate", ("parallelism_config",),
                      f"context parallelism (cp_size {sizes['cp']}) needs FSDP2, not {kind}")


@rule("AW314", "fsdp-without-shard-dimension", Severity.ERROR,
      fix="Give FSDP a dimension to shard: dp_shard_size > 1 (e.g. dp_shard 2 instead of tp 2), or drop FSDP")
def fsdp_without_shard_dimension(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FSDP2 with a `parallelism_config` that spends every process on tensor or sequence parallelism or
    replication, leaving `dp_shard_size` and `cp_size` at 1.

    ## Why is this bad?
    FSDP shards over the joint `dp_shard_cp` mesh dimension, which does not exist then: accelerate 1.15
    raises "FSDP is enabled but the parallelism config has no dimension for FSDP to shard across"; earlier
    versions failed in `prepare()` with `KeyError: Invalid mesh_dim_names ('dp_shard_cp',)` (accelerate#3798).

    ## Example
    ```yaml
    num_processes: 2
    parallelism_config:
      parallelism_config_dp_shard_size: 1
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 2` and `parallelism_config_tp_size: 1`, or TP without
    FSDP.
    """
    view = fsdp_view(ctx)
    sizes = parallelism_sizes(view) if view and view.fsdp_version == 2 else None
    if sizes and _total(sizes) > 1 and sizes["dp_shard"] == 1 and sizes["cp"] == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      "FSDP2 has no dimension to shard across: dp_shard_size and cp_size are both 1")


@rule("AW315", "megatron-degrees-do-not-divide-processes", Severity.ERROR,
      fix="Make num_processes a multiple of megatron_lm_tp_degree x megatron_lm_pp_degree")
def megatron_degrees_do_not_divide_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a MEGATRON_LM config whose `num_processes` is not a multiple of tensor x pipeline parallel degree.

    ## Why is this bad?
    Megatron-LM splits the world into tp x pp model-parallel groups and uses the quotient as the
    data-parallel size; a remainder fails Megatron's initialization in every process.

    ## Example
    ```yaml
    distributed_type: MEGATRON_LM
    num_processes: 6
    megatron_lm_config:
      megatron_lm_tp_degree: 2
      megatron_lm_pp_degree: 2
    ```
    Use instead: `num_processes: 8` (data parallel 2).
    """
    view = AccelerateView(ctx.accelerate) if ctx.accelerate else None
    if view is None or view.distributed_type != "MEGATRON_LM":
        return
    section, processes = view.section("megatron_lm_config"), view.integer("num_processes")
    degrees = [section.get("megatron_lm_tp_degree", 1), section.get("megatron_lm_pp_degree", 1)]
    if processes is None or processes < 1 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1
                                                      for d in degrees):
        return
    if processes % (degrees[0] * degrees[1]):
        yield Finding("accelerate", ("num_processes",),
                      f"num_processes ({processes}) is not a multiple of tp {degrees[0]} x pp {degrees[1]}")


# --- fp8 and dynamo settings (AW420-AW449) ---------------------------------------------------------------

# Keys `accelerate config` writes into fp8_config -> (the key the recipes read, the recipes' default).
FP8_WIZARD_KEYS = {
    "amax_history_length": ("amax_history_len", 1024),
    "amax_compute_algorithm": ("amax_compute_algo", "most_recent"),
    "optimization_level": ("opt_level", "O2"),
}
DYNAMO_OPTION_DEFAULTS = {"dynamo_mode": "default", "dynamo_use_fullgraph": False,
                          "dynamo_use_dynamic": False,
                          "dynamo_use_regional_compilation": False}


def _view(ctx: CheckContext) -> AccelerateView | None:
    return AccelerateView(ctx.accelerate) if ctx.accelerate else None


def _fp8(view: AccelerateView, name: str) -> tuple[tuple[str, ...], Any] | None:
    return view.nested("fp8_config", name, "fp8_")


def _uses_fp8(view: AccelerateView) -> bool:
    return view.document.get("mixed_precision") == "fp8"


@rule("AW420", "fp8-without-backend", Severity.WARNING,
      fix="Set fp8_config.backend to TE, MSAMP or AO")
def fp8_without_backend(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `mixed_precision: fp8` with no `fp8_config.backend`.

    ## Why is this bad?
    accelerate then picks the backend from whatever is installed (MS-AMP if importable, else
    TransformerEngine), so the same file trains with a different FP8 recipe on another machine, or fails with
    "Tried to train with `fp8` and auto-detect backend, but no FP8-compatible backend was installed".

    ## Example
    ```yaml
    mixed_precision: fp8
    ```
    Use instead: add `fp8_config: {backend: TE}`.
    """
    view = _view(ctx)
    if view and _uses_fp8(view) and _fp8(view, "backend") is None:
        yield Finding("accelerate", ("mixed_precision",), "mixed_precision fp8 without fp8_config.backend")


@rule("AW421", "fp8-wizard-key-ignored", Severity.WARNING,
      fix="Rename the key to the one the FP8 recipe reads")
def fp8_wizard_key_ignored(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `amax_history_length`, `amax_compute_algorithm` and `optimization_level` in `fp8_config`.

    ## Why is this bad?
    `accelerate config` writes these names, but the TransformerEngine and MS-AMP recipes read
    `amax_history_len`, `amax_compute_algo` and `opt_level`: the values are exported under the wrong
    environment variable and the defaults (1024, most_recent, O2) are used instead (accelerate 1.15, N3).

    ## Example
    ```yaml
    fp8_config:
      backend: TE
      amax_history_length: 16
    ```
    Use instead: `amax_history_len: 16`.
    """
    view = _view(ctx)
    if view is None:
        return
    for written, (read, default) in FP8_WIZARD_KEYS.items():
        found = _fp8(view, written)
        if found is None:
            continue
        used = _fp8(view, read)
        yield Finding("accelerate", found[0],
                      f"fp8_config.{written} is never read; the recipe reads {read} "
                      f"(which is {used[1] if used else default!r})", fix=f"rename it to `{read}`")


@rule("AW422", "fp8-config-without-fp8", Severity.WARNING,
      fix="Set mixed_precision: fp8, or remove fp8_config")
def fp8_config_without_fp8(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a non-empty `fp8_config` while `mixed_precision` is not `fp8`.

    ## Why is this bad?
    The launcher exports the FP8 settings only for fp8 runs, so the section has no effect; usually
    `mixed_precision` was meant to be `fp8`.

    ## Example
    ```yaml
    mixed_precision: bf16
    fp8_config:
      backend: TE
    ```
    Use instead: `mixed_precision: fp8`, or remove `fp8_config`.
    """
    view = _view(ctx)
    if view and view.section("fp8_config") and not _uses_fp8(view):
        precision = view.document.get("mixed_precision", default="no")
        yield Finding("accelerate", ("fp8_config",),
                      f"fp8_config is ignored with mixed_precision {precision!r}")


@rule("AW423", "fp8-override-precision-not-three-booleans", Severity.ERROR,
      fix="Write override_linear_precision as a list of three booleans: [false, false, false]")
def fp8_override_precision_not_three_booleans(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an fp8 run whose `fp8_config.override_linear_precision` is not a list of exactly three booleans,
    such as the string `"(false, false, false)"`.

    ## Why is this bad?
    The launcher exports items 0, 1 and 2 of the value as FP8_OVERRIDE_FPROP/DGRAD/WGRAD. For a string these
    are its first three characters (`(`, `f`, `a`), and the TransformerEngine recipe fails with
    `ValueError: invalid truth value (`; a shorter list fails in the launcher with an IndexError.

    ## Example
    ```yaml
    fp8_config:
      override_linear_precision: (false, false, false)
    ```
    Use instead: `override_linear_precision: [false, false, false]`.
    """
    view = _view(ctx)
    found = _fp8(view, "override_linear_precision") if view and _uses_fp8(view) else None
    if found is None:
        return
    value = found[1]
    if isinstance(value, str) or (isinstance(value, list) and len(value) != 3):
        yield Finding("accelerate", found[0],
                      f"override_linear_precision is {value!r}, not a list of three booleans")


@rule("AW424", "fp8-backend-incompatible", Severity.ERROR,
      fix="Use the TE or AO fp8 backend with FSDP, or turn off cpu_ram_efficient_loading for AO with FSDP2")
def fp8_backend_incompatible(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FP8 backends combined with settings they do not support: MS-AMP with FSDP, and torchao (AO) with
    FSDP2 and `fsdp_cpu_ram_efficient_loading`.

    ## Why is this bad?
    `Accelerator()` raises `NotImplementedError: accelerate + MS-AMP + FSDP is not supported` or "torchao with
    FSDP2 and cpu_ram_efficient_loading is not supported" in every process.

    ## Example
    ```yaml
    distributed_type: FSDP
    mixed_precision: fp8
    fp8_config:
      backend: MSAMP
    ```
    Use instead: `backend: TE`.
    """
    view = _view(ctx)
    backend = _fp8(view, "backend") if view and _uses_fp8(view) and view.is_fsdp else None
    if backend is None:
        return
    if backend[1] == "MSAMP":
        yield Finding("accelerate", backend[0], "the MS-AMP fp8 backend does not support FSDP")
    elif backend[1] == "AO" and view.fsdp_version == 2 and _ram_efficient_loading(view):
        yield Finding("accelerate", backend[0],
                      "the AO fp8 backend does not support FSDP2 with fsdp_cpu_ram_efficient_loading "
                      "(on by default)")


@rule("AW425", "dynamo-options-without-backend", Severity.WARNING,
      fix="Set dynamo_config.dynamo_backend (e.g. INDUCTOR), or remove the options")
def dynamo_options_without_backend(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `dynamo_config` options (mode, fullgraph, dynamic, regional compilation) set while the dynamo
    backend is `NO` or absent.

    ## Why is this bad?
    Without a backend accelerate does not call `torch.compile`, so the options have no effect; usually the
    backend line was forgotten.

    ## Example
    ```yaml
    dynamo_config:
      dynamo_mode: max-autotune
    ```
    Use instead: add `dynamo_backend: INDUCTOR`.
    """
    view = _view(ctx)
    if view is None or not view.section("dynamo_config"):
        return
    backend = view.nested("dynamo_config", "dynamo_backend", "dynamo_")
    if backend is not None and backend[1] != "NO":
        return
    for name, default in DYNAMO_OPTION_DEFAULTS.items():
        found = view.nested("dynamo_config", name, "dynamo_")
        if found is not None and found[1] != default:
            yield Finding("accelerate", found[0], f"{name} has no effect without a dynamo backend")
