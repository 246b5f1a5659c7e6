"""AW715-AW717: FSDP configured through the Trainer's `--fsdp` / `--fsdp_config`, against the launch.

accelwiz.config.trainer_fsdp builds the plugin arguments as `TrainingArguments._process_fsdp_args` does;
`trainer_fsdp_values` turns them into effective values (called from `trainer_effective`, the one place the
Trainer's values enter `ctx.effective`), so the FSDP rules, the strategy and the memory estimate judge the run the
Trainer starts. How the plugin meets the launcher (accelerate 1.15):
- `Accelerator(fsdp_plugin=...)` sets ACCELERATE_USE_FSDP and `AcceleratorState` turns a MULTI_GPU launch into
  FSDP (state.py); under DeepSpeed or a single process it does not, and the Trainer raises instead
  (transformers 5.24 trainer.py `Trainer.__init__`);
- with an FSDP YAML, the keys the Trainer passes win; the others come from the FSDP_* variables the launcher
  exported (`FullyShardedDataParallelPlugin.__post_init__` reads the environment only for None fields);
- FSDP1 reads `sharding_strategy` from FSDP_SHARDING_STRATEGY (FULL_SHARD unless the YAML says) and prefers it
  over the Trainer's `reshard_after_forward` (accelerator.py `prepare_model`: `sharding_strategy or
  reshard_after_forward`), so `--fsdp shard_grad_op` with fsdp_config version 1 does not change the sharding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.config.trainer_fsdp import TrainerFsdp
    from accelwiz.rules.context import CheckContext

_CACHE_KEY = "_accelwiz_trainer_fsdp"
# the launches whose AcceleratorState becomes FSDP when the Accelerator is given a plugin (state.py)
_BECOMES_FSDP = ("MULTI_GPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_HPU",
                 "MULTI_NEURON", "FSDP")


def trainer_fsdp_of(ctx: CheckContext) -> TrainerFsdp | None:
    """The Trainer's FSDP for this unit, computed once; None without Trainer arguments or --fsdp."""
    args = getattr(ctx, "training_args", None)
    if args is None:
        return None
    if _CACHE_KEY not in ctx.__dict__:
        from accelwiz.config.trainer_fsdp import trainer_fsdp

        ctx.__dict__[_CACHE_KEY] = trainer_fsdp(args)
    return ctx.__dict__[_CACHE_KEY]


def _refusal(ctx: CheckContext, fsdp: TrainerFsdp) -> str | None:
    """Why the Trainer stops with this --fsdp, in transformers' words; None when it runs."""
    if fsdp.problem:
        return fsdp.problem
    launched = ctx.files_effective.distributed_type.value if ctx.accelerate is not None else None
    deepspeed = ctx.training_args.deepspeed  # --deepspeed; else the launcher's DeepSpeed (YAML or JSON)
    if (isinstance(deepspeed, dict) or (isinstance(deepspeed, str) and deepspeed.strip())
            or ctx.files_effective.uses_deepspeed):
        return "Using --fsdp xxx together with --deepspeed is not possible, deactivate one of those flags."
    if launched == "NO" and not fsdp.xla:
        return "Using fsdp only works in distributed training."
    return None


def _applies(ctx: CheckContext, fsdp: TrainerFsdp | None) -> bool:
    if fsdp is None or fsdp.xla or _refusal(ctx, fsdp) is not None or ctx.accelerate is None:
        return False
    if any(problem.name in ("fsdp", "fsdp_config") for problem in ctx.training_args.problems):
        return False  # the parser refuses the value (AW701): the run stops before any plugin
    return ctx.files_effective.distributed_type.value in _BECOMES_FSDP


def trainer_fsdp_values(ctx: CheckContext, base: Any) -> dict[str, tuple[Any, str]]:
    """The effective FSDP values of a run whose Trainer builds the plugin: the Trainer's where it passes one, the
    launcher's FSDP_* values (`base`, from an FSDP YAML) or the plugin's defaults where it does not."""
    fsdp = trainer_fsdp_of(ctx)
    if not _applies(ctx, fsdp):
        return {}
    plugin, where = fsdp.plugin, fsdp.where
    config = fsdp.config_name or ("--fsdp_config" if ctx.training_args["fsdp_config"] else None)
    via = f"{where} + {config}" if config else where
    yaml_fsdp = base.is_fsdp

    def launcher(name: str, default: Any) -> tuple[Any, str]:
        found = getattr(base, name)
        if yaml_fsdp and found.is_set:
            return found.value, "not passed by the Trainer: the launcher's FSDP_* value"
        return default, "not passed by the Trainer: the plugin's default"

    from accelwiz.effective_settings import _state_dict_type

    version = plugin["fsdp_version"]
    values: dict[str, tuple[Any, str]] = {
        "distributed_type": ("FSDP", f"{where}: the Trainer's FullyShardedDataParallelPlugin"),
        "fsdp_version": (version, f"{via} (the Trainer's default is 2)"),
        "fsdp_auto_wrap_policy": (plugin["auto_wrap_policy"], via),
        "fsdp_state_dict_type": (_state_dict_type(plugin["state_dict_type"]), via),
        "fsdp_cpu_ram_efficient_loading": (plugin["cpu_ram_efficient_loading"], via),
        "fsdp_offload_params": (True, via) if plugin.get("cpu_offload") else launcher("fsdp_offload_params", False),
    }
    if "activation_checkpointing" in plugin:
        values["fsdp_activation_checkpointing"] = (plugin["activation_checkpointing"], via)
    else:
        values["fsdp_activation_checkpointing"] = launcher("fsdp_activation_checkpointing", False)
    if "min_num_params" in plugin:
        values["fsdp_min_num_params"] = (plugin["min_num_params"], via)
    elif plugin["auto_wrap_policy"] == "SIZE_BASED_WRAP":
        values["fsdp_min_num_params"] = launcher("fsdp_min_num_params", 0)
    values.update(_fsdp2_values(plugin, via) if version == 2 else _fsdp1_values(ctx, plugin, via, yaml_fsdp))
    return values


def _fsdp2_values(plugin: dict, via: str) -> dict[str, tuple[Any, str]]:
    """FSDP2's sharding, prefetch and parameters, as the Trainer's plugin sets them."""
    return {"fsdp_sharding": ("FULL_SHARD" if plugin["reshard_after_forward"] else "SHARD_GRAD_OP",
                              f"{via}: reshard_after_forward {str(plugin['reshard_after_forward']).lower()}"),
            "fsdp_backward_prefetch": ("NO_PREFETCH", "FSDP2 has no backward prefetch"),
            "fsdp_use_orig_params": (True, "FSDP2 always keeps the original parameters")}


def _fsdp1_values(ctx: CheckContext, plugin: dict, via: str, yaml_fsdp: bool) -> dict[str, tuple[Any, str]]:
    """FSDP1's sharding (the launcher's FSDP_SHARDING_STRATEGY wins), prefetch, module-state sync, parameters."""
    prefetch = plugin["backward_prefetch"]
    orig = "use_orig_params" in (ctx.training_args["fsdp_config"] or {})
    return {"fsdp_sharding": fsdp1_sharding(ctx if yaml_fsdp else None),
            "fsdp_backward_prefetch": (prefetch if prefetch in ("BACKWARD_PRE", "BACKWARD_POST")
                                       else "NO_PREFETCH", via),
            "fsdp_sync_module_states": (plugin["sync_module_states"] or plugin["cpu_ram_efficient_loading"], via),
            "fsdp_use_orig_params": (plugin["use_orig_params"],
                                     via if orig else f"{via}: not written, the Trainer's default")}


def fsdp1_sharding(ctx: CheckContext | None) -> tuple[str, str]:
    """FSDP1's strategy: FSDP_SHARDING_STRATEGY (an FSDP YAML's fsdp_sharding_strategy, which the launcher always
    exports, FULL_SHARD unless written, whatever the YAML's version), else FULL_SHARD; the Trainer's
    reshard_after_forward loses to it."""
    from accelwiz import coerce
    from accelwiz.effective_value import fsdp_entry

    found = fsdp_entry(ctx.accelerate, "fsdp_sharding_strategy") if ctx is not None else None
    strategy = coerce.sharding_strategy(found[1]) if found else None
    if strategy is not None:
        return strategy, "FSDP1 reads FSDP_SHARDING_STRATEGY, the YAML's, over the Trainer's"
    return "FULL_SHARD", "FSDP1 reads FSDP_SHARDING_STRATEGY (FULL_SHARD here) over the Trainer's"


@rule("AW715", "trainer-fsdp-refused", Severity.ERROR,
      fix="Give FSDP one owner: the Trainer's --fsdp/--fsdp_config on a multi-process launch without DeepSpeed, "
          "or the Accelerate YAML's fsdp_config without --fsdp; write fsdp_config keys transformers accepts")
def trainer_fsdp_refused(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Builds the FSDP plugin arguments from the Trainer's `--fsdp` and `--fsdp_config` as transformers 5 does, and
    reports what stops the run: a `--fsdp` option or `fsdp_config` value transformers refuses, an unreadable
    `--fsdp_config` file, `--fsdp` together with DeepSpeed (the YAML's or `--deepspeed`), or `--fsdp` on a
    single-process launch.

    ## Why is this bad?
    `TrainingArguments._process_fsdp_args` raises on "Unknown `fsdp` option", on a FSDP1-only strategy such as
    `hybrid_shard` under FSDP2 (the Trainer's default version), and on an `auto_wrap_policy` outside
    TRANSFORMER_BASED_WRAP/SIZE_BASED_WRAP/NO_WRAP (compared exactly, while accelerate's YAML upper-cases it);
    `Trainer.__init__` raises "Using --fsdp xxx together with --deepspeed is not possible" and "Using fsdp only
    works in distributed training" (transformers 5.24 training_args.py, trainer.py). Each happens in every
    process, after the model is loaded.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fsdp "full_shard auto_wrap"
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 3
    ```
    Use instead: a MULTI_GPU launch, which the Trainer's plugin turns into FSDP (or drop `--fsdp` and keep
    DeepSpeed). Likewise `--fsdp hybrid_shard` is refused under FSDP2, the Trainer's default: write
    `full_shard` or `shard_grad_op`.
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    """
    fsdp = trainer_fsdp_of(ctx)
    if fsdp is None:
        return
    refusal = _refusal(ctx, fsdp)
    if refusal is not None:
        yield Finding(None, (), f"{fsdp.where}: the Trainer stops: {refusal}")


# effective setting -> the fsdp_config key of the YAML it is written as
_YAML_KEYS = {"fsdp_version": "fsdp_version", "fsdp_sharding": "fsdp_sharding_strategy",
              "fsdp_state_dict_type": "fsdp_state_dict_type", "fsdp_auto_wrap_policy": "fsdp_auto_wrap_policy",
              "fsdp_cpu_ram_efficient_loading": "fsdp_cpu_ram_efficient_loading"}


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _written(name: str, was: Any) -> str:
    """The YAML key as written (FSDP2's sharding is its reshard_after_forward: `false (SHARD_GRAD_OP)`)."""
    key = was.path[-1] if was.path else _YAML_KEYS[name]
    if key.removeprefix("fsdp_") == _YAML_KEYS[name].removeprefix("fsdp_"):
        return f"{key} {_shown(was.value)}"
    return f"{key} {_shown(was.written)} ({_shown(was.value)})"


@rule("AW716", "trainer-fsdp-setting-overridden", Severity.WARNING,
      fix="Configure FSDP in one place: drop --fsdp and keep the YAML's fsdp_config, or write the values in "
          "--fsdp_config (version 2 is the Trainer's default); with FSDP1, set the strategy as "
          "fsdp_sharding_strategy in the YAML")
def trainer_fsdp_setting_overridden(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With the Trainer's `--fsdp`, finds the FSDP settings that do not run as written: a YAML `fsdp_config` value
    the Trainer's plugin replaces (its version, sharding, state dict type, wrap policy, RAM-efficient loading),
    and a Trainer sharding strategy that FSDP1 ignores.

    ## Why is this bad?
    The Trainer hands the Accelerator its own `FullyShardedDataParallelPlugin`; only the fields it leaves unset
    are read from the FSDP_* variables the launcher exported from the YAML. It always passes `fsdp_version`
    (2 unless `fsdp_config` says), `state_dict_type` (FULL_STATE_DICT), `auto_wrap_policy`
    (TRANSFORMER_BASED_WRAP) and `cpu_ram_efficient_loading` (false), so a YAML written for FSDP1 with a
    SHARDED_STATE_DICT silently runs FSDP2 with full state dicts (transformers 5.24
    `TrainingArguments._process_fsdp_args`). Under FSDP1 the plugin takes its strategy from
    FSDP_SHARDING_STRATEGY (FULL_SHARD when unset) and prefers it over the Trainer's `reshard_after_forward`
    (accelerate 1.15 `Accelerator.prepare_model`), so `--fsdp shard_grad_op` does not change the sharding.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fsdp "full_shard auto_wrap"
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 1
      fsdp_state_dict_type: SHARDED_STATE_DICT
    ```
    Use instead: one owner. Either drop `--fsdp` and keep the YAML's `fsdp_config`, or let the Trainer own FSDP
    on a MULTI_GPU launch (with `--fsdp_config` for anything but its defaults).
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    """
    fsdp = trainer_fsdp_of(ctx)
    if not _applies(ctx, fsdp):
        return
    effective, files = ctx.effective, ctx.files_effective
    if files.is_fsdp:
        changed = [(name, getattr(files, name), getattr(effective, name)) for name in _YAML_KEYS]
        listed = [f"{_written(name, was)} -> {_shown(now.value)}" for name, was, now in changed
                  if was.is_written and was.is_set and now.source == "trainer" and now.value != was.value]
        if listed:
            yield Finding("accelerate", ("fsdp_config",), f"{fsdp.where} replaces the YAML's FSDP settings: "
                                                          f"{', '.join(listed)} (the Trainer's plugin wins)")
    asked = fsdp.plugin.get("reshard_after_forward")
    if fsdp.plugin["fsdp_version"] == 1 and isinstance(asked, str) and asked.upper() != effective.fsdp_sharding.value:
        yield Finding(None, (), f"the Trainer asks FSDP1 for {asked.upper()} ({fsdp.where}), but the plugin takes "
                                f"FSDP_SHARDING_STRATEGY: the run is {effective.fsdp_sharding.value}")


@rule("AW717", "trainer-fsdp-config-without-fsdp", Severity.WARNING,
      fix="Add --fsdp to turn the Trainer's FSDP on, or drop --fsdp_config (an FSDP YAML configures FSDP itself)")
def trainer_fsdp_config_without_fsdp(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds the Trainer's `--fsdp_config` without `--fsdp`.

    ## Why is this bad?
    `TrainingArguments._process_fsdp_args` returns at once when `fsdp` is not set (transformers 5.24): the
    `fsdp_config` file is never opened, no plugin is built, and the run is whatever the launcher says (DDP on a
    MULTI_GPU launch, or the YAML's own `fsdp_config`), with none of the wrap class, offload or checkpointing
    the file asks for.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fsdp_config '{"version": 2, "cpu_offload": true}'
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    Use instead: `--fsdp --fsdp_config '{"version": 2, "cpu_offload": true}'`, or drop `--fsdp_config` and
    write the settings in an FSDP YAML (`fsdp_version: 2`, `fsdp_offload_params: true`).
    """
    args = getattr(ctx, "training_args", None)
    if args is None or args["fsdp"] or not args.is_given("fsdp_config") or args["fsdp_config"] in (None, "", {}):
        return
    runs = "the YAML's fsdp_config" if ctx.files_effective.is_fsdp else "no FSDP from the Trainer"
    yield Finding(None, (), f"{args.where('fsdp_config')} without --fsdp: the Trainer never reads it ({runs} runs)")
