"""AW225-AW228, AW232: `"auto"` values: who fills them (accelerate, the HF Trainer or nobody) and what a
value left unfilled or unwritten becomes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz.config.base import AUTO
from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import (
    FILLED_BY_ACCELERATE,
    FILLED_BY_TRAINER_ONLY,
    ZERO,
    auto_paths,
    dotted_path,
    hf_launched,
    via_accelerate,
    zero_stage,
)
from accelwiz.probe.versions import version_at_least
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.installed import stack_at_least, stack_version
from accelwiz.rules.rule import rule

HIDDEN_SIZE_KEYS = (f"{ZERO}.reduce_bucket_size", f"{ZERO}.stage3_prefetch_bucket_size",
                    f"{ZERO}.stage3_param_persistence_threshold")

# DeepSpeed itself understands a literal "auto" here (plain DeepSpeed keeps it; accelerate still refuses it).
DEEPSPEED_NATIVE_AUTO = frozenset({
    "pipeline.stages", "data_types.keep_in_fp32_modules", f"{ZERO}.zenflow.select_strategy",
    f"{ZERO}.zenflow.select_interval", f"{ZERO}.zenflow.update_interval",
})

# Blocks DeepSpeed validates with pydantic, which silently drops "auto" and uses the field default.
PYDANTIC_BLOCKS = frozenset({ZERO, "fp16", "bf16", "bfloat16", "comms_logger", "tensorboard", "wandb",
                             "csv_monitor", "comet", "hybrid_engine", "compile", "tensor_parallel", "timers"})


def _unfilled_autos(ctx: CheckContext) -> Iterator[KeyPath]:
    """"auto" values that neither accelerate nor the HF Trainer fills."""
    if ctx.deepspeed is None:
        return
    for path in auto_paths(ctx.deepspeed.data):
        if dotted_path(path) not in FILLED_BY_ACCELERATE | FILLED_BY_TRAINER_ONLY:
            yield path


def _filled_name(path: KeyPath) -> str | None:
    """For a short ZeRO name whose `stage3_` spelling accelerate fills, that spelling."""
    from accelwiz.config.deepspeed_zero import STAGE3_ALIASES

    if len(path) == 2 and path[0] == ZERO:
        alias = next((a for a, short in STAGE3_ALIASES.items() if short == path[1]), None)
        if alias and f"{ZERO}.{alias}" in FILLED_BY_ACCELERATE:
            return alias
    if path == ("bfloat16", "enabled"):
        return "bf16.enabled"
    return None


def _schema_default(path: KeyPath) -> Any:
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.config.validate import model_at

    section = model_at(DeepSpeedConfig, path[:-1])
    if section is None:
        return None
    for name, info in section.model_fields.items():
        if path[-1] in (name, info.alias):
            return None if info.is_required() else info.default
    return None


@rule("AW225", "auto-without-resolver", Severity.ERROR, fix='Replace "auto" with a value')
def auto_without_resolver(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` on a key that neither accelerate nor the HF Trainer fills, in a DeepSpeed JSON used through
    accelerate or written for it (it uses `"auto"` on the keys they do fill). Among them: `"auto"` under the
    short ZeRO names (`prefetch_bucket_size`, `param_persistence_threshold`), which are filled only under
    their `stage3_` names, and the legacy `bfloat16` block.

    ## Why is this bad?
    `"auto"` is not a DeepSpeed value. accelerate replaces the keys it knows and refuses every other `"auto"`
    in `prepare()`, after the model is loaded: "`zero_optimization.prefetch_bucket_size` not found in kwargs.
    Please specify `zero_optimization.prefetch_bucket_size` without `auto`" (axolotl#2964).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3, "prefetch_bucket_size": "auto"}}
    ```
    Use instead: `"stage3_prefetch_bucket_size": "auto"`, or a number.
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}
    ```
    """
    if not hf_launched(ctx):
        return
    for path in _unfilled_autos(ctx):
        dotted, filled = dotted_path(path), _filled_name(path)
        if filled:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto", but accelerate and the HF Trainer only '
                                             'fill '
                                             f"`{filled}`: prepare() fails", f"Rename the key to `{filled}`")
        else:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto", which neither accelerate nor the HF '
                                             'Trainer fills: prepare() fails with "not found in kwargs"')


@rule("AW226", "auto-dropped-by-deepspeed", Severity.WARNING, fix='Replace "auto" with the value you want')
def auto_dropped_by_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` in a DeepSpeed JSON meant for the plain `deepspeed` launcher (checked alone, with no
    `"auto"` on the keys Hugging Face fills), on a key nothing fills.

    ## Why is this bad?
    DeepSpeed never resolves `"auto"`. Inside its validated blocks (`zero_optimization`, `fp16`, `bf16`, ...)
    it silently drops the value and uses the default (`"stage": "auto"` becomes stage 0); elsewhere the string
    reaches the code that uses the value and fails there. Through accelerate or the HF Trainer the same file
    is refused.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto"}}
    ```
    Use instead: `"stage3_max_live_parameters": 1e9` (the default that DeepSpeed used).
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9}}
    ```
    """
    if hf_launched(ctx):
        return
    for path in _unfilled_autos(ctx):
        if dotted_path(path) in DEEPSPEED_NATIVE_AUTO:
            continue
        dotted = dotted_path(path)
        if path[0] in PYDANTIC_BLOCKS:
            default = _schema_default(path)
            shown = f"its default {default!r}" if default is not None else "its default"
            yield Finding("deepspeed", path, f'`{dotted}` is "auto": DeepSpeed drops it and uses {shown}')
        else:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto": DeepSpeed passes the string on '
                                             'unresolved')


@rule("AW227", "auto-needs-trainer", Severity.INFO,
      fix="Write the value, unless the script uses the HF Trainer")
def auto_needs_trainer(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` on keys that only the HF Trainer fills (`optimizer.params.betas`, `optimizer.params.eps`),
    in a DeepSpeed JSON used through an Accelerate YAML.

    ## Why is this bad?
    The Trainer fills them from `adam_beta1/2` and `adam_epsilon`; a plain accelerate training loop cannot,
    and `prepare()` fails: "`optimizer.params.betas` not found in kwargs".

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2},
     "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto"}}}
    ```
    used by a plain accelerate loop:
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2},
     "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "betas": [0.9, 0.999]}}}
    ```
    """
    if not via_accelerate(ctx) or ctx.deepspeed is None:
        return
    # the HF Trainer is known to run: its arguments were given (`-- ARGS`), or the plan says it owns the batch
    if ctx.training_args is not None or (ctx.plan is not None and ctx.plan.training.owner == "trainer"):
        return
    for path in auto_paths(ctx.deepspeed.data):
        if dotted_path(path) in FILLED_BY_TRAINER_ONLY:
            yield Finding("deepspeed", path, f'`{dotted_path(path)}` is "auto", which only the HF Trainer '
                                             'fills; a plain '
                                             "accelerate loop fails in prepare()")


@rule("AW228", "implicit-gradient-clipping", Severity.INFO,
      fix="Write the clipping value explicitly; 0.0 disables clipping")
def implicit_gradient_clipping(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds DeepSpeed runs through accelerate whose gradient clipping is not written as a number: `"auto"`, or
    no `gradient_clipping` at all.

    ## Why is this bad?
    accelerate fills `"auto"` with 1.0, and answering "no clipping" in `accelerate config` writes nothing,
    which also ends as 1.0 (accelerate#3807, PR #2791); DeepSpeed's own default is 1.0 since 0.19.3 and was
    0.0 before. The run clips at 1.0 although no file says so.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "gradient_clipping": "auto"}
    ```
    used by a plain accelerate loop:
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "gradient_clipping": 1.0}
    ```
    or `0.0` for no clipping.
    """
    clipping = ctx.effective.gradient_clipping
    if via_accelerate(ctx) and ctx.effective.uses_deepspeed and clipping.source in ("derived",
                                                                                     "deepspeed default"):
        where = "is \"auto\"" if clipping.path else "is not set"
        if clipping.role is not None:
            role, path = clipping.role, clipping.path
        else:
            in_json = ctx.deepspeed is not None
            role, path = ("deepspeed", ()) if in_json else ("accelerate", ("deepspeed_config",))
        norm = deepspeed_default_clipping(ctx) if clipping.source == "deepspeed default" else 1.0
        effect = (f"the run clips gradients at norm {norm}" if norm else
                  f"DeepSpeed {stack_version(ctx, 'deepspeed')} does not clip (its default is 0.0 before 0.19.3)")
        yield Finding(role, path, f"gradient_clipping {where}: {effect}")


def deepspeed_default_clipping(ctx: CheckContext) -> float:
    """The clipping DeepSpeed applies when no file sets it: 1.0 from 0.19.3 (`gradient_clipping` in
    deepspeed/runtime/constants.py), 0.0 before; 1.0 when the version is not known."""
    return 0.0 if stack_at_least(ctx, "deepspeed", "0.19.3") is False else 1.0


@rule("AW232", "hidden-size-auto-below-zero3", Severity.INFO,
      fix="Write the bucket sizes as numbers, or leave the ZeRO-3 keys out below stage 3")
def hidden_size_auto_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds the bucket sizes that are filled from the model's hidden size written as `"auto"` with a ZeRO stage
    below 3: the two ZeRO-3 ones (`stage3_prefetch_bucket_size`, `stage3_param_persistence_threshold`) always,
    `reduce_bucket_size` only where the installed transformers is 4.17 or older.

    ## Why is this bad?
    The two `stage3_` keys do nothing below stage 3: accelerate and transformers fill them from
    `model.config.hidden_size` anyway, and fail for a model without it. transformers up to 4.17 filled the
    bucket sizes only for ZeRO-3, so DeepSpeed then failed on the string "auto" (transformers#16495); with
    4.18 and later (and with accelerate) `reduce_bucket_size: "auto"` is filled at any stage, and is no finding.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "stage3_prefetch_bucket_size": "auto"}}
    ```
    Use instead: leave the ZeRO-3 key out below stage 3.
    ```json
    {"zero_optimization": {"stage": 2}}
    ```
    """
    stage = zero_stage(ctx)
    if ctx.deepspeed is None or stage is None or stage >= 3:
        return
    transformers = stack_version(ctx, "transformers")
    leaves_it_unfilled = transformers is not None and version_at_least(transformers, "4.18") is False
    for key in HIDDEN_SIZE_KEYS:
        path = tuple(key.split("."))
        if ctx.deepspeed.get(*path) == AUTO:
            if path[-1] != "reduce_bucket_size":
                effect = f"a ZeRO-3 setting, unused at stage {stage}"
            elif leaves_it_unfilled:
                effect = f"transformers {transformers} (<= 4.17) leaves it unfilled below ZeRO-3"
            else:
                continue  # accelerate and transformers >= 4.18 fill it at any stage
            yield Finding("deepspeed", path, f'`{key}` is "auto" at ZeRO stage {stage}: {effect}')
