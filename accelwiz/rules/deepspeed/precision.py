"""AW401-AW405, AW408, AW409: precision in the DeepSpeed JSON (fp16/bf16 blocks, loss scaling, dtypes) and its
agreement with the YAML's `mixed_precision`. Master weights and optimizer states in 16 bits (AW406, AW407) are in
`master_weights.py`."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.config.base import AUTO
from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import zero_stage
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.rule import rule


def _json_precisions(ctx: CheckContext) -> dict[str, KeyPath]:
    """The precisions the DeepSpeed JSON enables, with where each is enabled (ctx.effective's fp16/bf16 blocks)."""
    effective = ctx.effective
    return {name: block.path for name, block in (("fp16", effective.fp16_enabled), ("bf16", effective.bf16_enabled))
            if block.value is True and block.role == "deepspeed"}


def _precision_is_auto(ctx: CheckContext) -> bool:
    """The JSON leaves the precision to the launcher or the Trainer (`"enabled": "auto"`)."""
    return any(block.written == AUTO for block in (ctx.effective.fp16_enabled, ctx.effective.bf16_enabled))


def _misplaced_precision(ctx: CheckContext) -> str | None:
    """A `mixed_precision` key inside the DeepSpeed JSON: a key DeepSpeed never reads (DeepSpeed#3024)."""
    written = ctx.deepspeed.get("mixed_precision") if ctx.deepspeed is not None else None
    return written if isinstance(written, str) else None


@rule("AW401", "fp16-and-bf16-enabled", Severity.ERROR, fix="Enable only one of `fp16` and `bf16`")
def fp16_and_bf16_enabled(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON that enables both `fp16` and `bf16`.

    ## Why is this bad?
    DeepSpeed refuses it: "bfloat16 and fp16 modes cannot be simultaneously enabled".

    ## Example
    ```json
    {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
    ```
    Use instead: `"bf16": {"enabled": true}` alone (or `"auto"` for both with the HF Trainer).
    ```json
    {"bf16": {"enabled": true}}
    ```
    """
    found = _json_precisions(ctx)
    if len(found) == 2:
        yield Finding("deepspeed", found["bf16"], "fp16 and bf16 are both enabled; DeepSpeed allows only one")


@rule("AW402", "mixed-precision-disagrees-with-deepspeed", Severity.ERROR,
      fix="Declare the precision once: in the DeepSpeed JSON, with `mixed_precision` left out of the YAML")
def mixed_precision_disagrees_with_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `mixed_precision` (in the Accelerate YAML, or misplaced inside the DeepSpeed JSON) that disagrees
    with the `fp16`/`bf16` block the JSON enables.

    ## Why is this bad?
    accelerate refuses it: "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the
    DeepSpeed config file." (transformers#39849). With `mixed_precision: 'no'` the run silently trains in the
    JSON's precision; a `mixed_precision` key inside the JSON is ignored by DeepSpeed altogether
    (DeepSpeed#3024).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    mixed_precision: bf16
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "fp16": {"enabled": true}}
    ```
    Use instead: remove `mixed_precision`, or make the JSON say `"fp16": {"enabled": "auto"}`.
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "fp16": {"enabled": "auto"}}
    ```
    """
    found = _json_precisions(ctx)
    if not found:
        return
    launcher = ctx.effective.launcher_mixed_precision  # lower-cased as the launcher does: BF16 is bf16
    written = launcher.value if isinstance(launcher.written, str) else None  # an unquoted `no` is YAML false
    declared: list[tuple[str | None, Role]] = [(written, "accelerate"),
                                               (_misplaced_precision(ctx), "deepspeed")]
    for wanted, role in declared:
        if wanted is None:
            continue
        expected = "bf16" if wanted == "fp8" else wanted
        if expected not in found:
            shown = " and ".join(found)
            yield Finding(role, ("mixed_precision",),
                          f"`mixed_precision: {wanted}` disagrees with the DeepSpeed JSON, which enables "
                          f"{shown}")


@rule("AW403", "hardcoded-deepspeed-precision", Severity.INFO,
      fix='Write `"enabled": "auto"` so the launcher or the Trainer decides, or keep both sides in step')
def hardcoded_deepspeed_precision(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON that enables `fp16` or `bf16` literally while no Accelerate YAML declares the same
    `mixed_precision`.

    ## Why is this bad?
    The precision is decided in two places. A launcher flag or Trainer argument asking for the other one
    (`--mixed_precision bf16`, `TrainingArguments(bf16=True)`, or a library default) is refused:
    "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file"
    (transformers#39849); with the HF Trainer, `"fp16": "auto"` plus a hard-coded bf16 enables both when run
    with `--fp16`.

    ## Example
    ```json
    {"fp16": {"enabled": true}}
    ```
    Use instead: `{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}`.
    ```json
    {"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}
    ```
    """
    declared = ctx.effective.launcher_mixed_precision.is_written
    for precision, path in _json_precisions(ctx).items():
        if not declared:
            yield Finding("deepspeed", path, f"{precision} is fixed in the DeepSpeed JSON; a launcher or "
                                             "Trainer asking for another precision is refused")


@rule("AW404", "communication-dtype-differs-from-training", Severity.WARNING,
      fix="Remove `communication_data_type`, or enable the matching `fp16`/`bf16` block")
def communication_dtype_differs_from_training(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `communication_data_type` set to `fp16` or `bf16` while the JSON trains in another precision (fp32
    when neither `fp16` nor `bf16` is enabled).

    ## Why is this bad?
    The gradient buckets are built for the training dtype; reducing them in another dtype is a path DeepSpeed
    barely tests. With ZeRO-1/2 and an fp32 model it crashed ("KeyError: torch.float32", then "start (0) +
    length (16384) exceeds dimension size (10000)", DeepSpeed#7653). It also reduces gradients at lower
    precision than the model trains with.

    ## Example
    ```json
    {"communication_data_type": "bf16", "zero_optimization": {"stage": 1}}
    ```
    Use instead: drop `communication_data_type`, or add `"bf16": {"enabled": true}`.
    ```json
    {"zero_optimization": {"stage": 1}}
    ```
    """
    wanted = ctx.effective.communication_data_type.value  # lower-cased, as DeepSpeed reads it
    if wanted not in ("fp16", "bf16") or _precision_is_auto(ctx):
        return
    found = _json_precisions(ctx)
    training = next(iter(found), "fp32")
    if wanted not in found:
        yield Finding("deepspeed", ("communication_data_type",),
                      f"communication_data_type is {wanted} but the model trains in {training}")


@rule("AW405", "bf16-with-zero-stage0", Severity.INFO, fix="Use ZeRO stage 1 or higher on DeepSpeed older "
                                                           "than 0.7")
def bf16_with_zero_stage0(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `bf16` enabled with ZeRO stage 0.

    ## Why is this bad?
    Current DeepSpeed supports it, but releases of early 2022 refused it: "bfloat16 mode is only enabled for
    Zero 1,2,3 currently" (DeepSpeed#1784), and the bf16 + ZeRO-0 gradient-norm path had bugs fixed only
    later. The config is version-dependent.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}
    ```
    Use instead: `"stage": 1` when the cluster runs an old DeepSpeed.
    ```json
    {"bf16": {"enabled": true}, "zero_optimization": {"stage": 1}}
    ```
    """
    if zero_stage(ctx) != 0:
        return
    path = _json_precisions(ctx).get("bf16")
    if path is not None:
        yield Finding("deepspeed", path, "bf16 with ZeRO stage 0 needs a recent DeepSpeed (older releases "
                                         "refuse it)")


@rule("AW408", "fp16-loss-scale-invalid", Severity.ERROR, fix="Use loss_scale >= 0 and positive window and "
                                                              "minimum")
def fp16_loss_scale_invalid(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds fp16 loss-scaling values DeepSpeed refuses: a negative `loss_scale`, or with dynamic scaling
    (`loss_scale: 0`) a `loss_scale_window` or `min_loss_scale` that is not positive.

    ## Why is this bad?
    DeepSpeed refuses the config: "fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)",
    "fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled (loss_scale=0)",
    "fp16.min_loss_scale must be > 0 ...". A window of 0 would divide by zero in the loss scaler.

    ## Example
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 0}}
    ```
    Use instead: `"min_loss_scale": 1`.
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 1}}
    ```
    """
    effective = ctx.effective
    written = effective.fp16_loss_scale
    scale = written.value if written.is_written else 0.0  # 0 (dynamic loss scaling) is DeepSpeed's default
    if scale is not None and scale < 0:
        yield Finding("deepspeed", ("fp16", "loss_scale"), f"fp16.loss_scale is {scale}; it must be >= 0")
    fp16 = effective.fp16_enabled
    if scale == 0 and (fp16.value is True or fp16.written == AUTO):
        for key, item in (("loss_scale_window", effective.fp16_loss_scale_window),
                          ("min_loss_scale", effective.fp16_min_loss_scale)):
            value = item.value
            if value is not None and value <= 0:
                yield Finding("deepspeed", ("fp16", key),
                              f"fp16.{key} is {value:g}; it must be > 0 with dynamic loss scaling")


@rule("AW409", "param-dtype-conflicts-with-precision", Severity.ERROR,
      fix="Remove `data_types.param_dtype`, or enable the matching `fp16`/`bf16` block")
def param_dtype_conflicts_with_precision(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `data_types.param_dtype` that differs from the precision the JSON enables (fp32 when neither `fp16`
    nor `bf16` is enabled).

    ## Why is this bad?
    The engine refuses it at start: "data_types.param_dtype='bf16' conflicts with the enabled precision mode".

    ## Example
    ```json
    {"data_types": {"param_dtype": "bf16"}, "fp16": {"enabled": true}}
    ```
    Use instead: `"param_dtype": "fp16"`, or leave it out.
    ```json
    {"data_types": {"param_dtype": "fp16"}, "fp16": {"enabled": true}}
    ```
    """
    wanted = ctx.effective.param_dtype.value
    if wanted is None or _precision_is_auto(ctx):
        return
    training = next(iter(_json_precisions(ctx)), "fp32")
    if wanted in ("fp16", "bf16", "fp32") and wanted != training:
        yield Finding("deepspeed", ("data_types", "param_dtype"),
                      f"data_types.param_dtype is {wanted} but the model trains in {training}")
