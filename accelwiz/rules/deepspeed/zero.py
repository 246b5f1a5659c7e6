"""AW218-AW220, AW224, AW229-AW231: ZeRO settings that DeepSpeed or accelerate refuse, or ignore at the
given stage. The YAML's zero3_init_flag against the stage (AW216, AW217) is in `zero3_init.py`."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.probe.versions import version_at_least
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO, zero_stage
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.installed import stack_version
from accelwiz.rules.rule import rule


@rule("AW218", "reduce-bucket-size-zero", Severity.ERROR, fix="Leave `reduce_bucket_size` out, or use a "
                                                              "positive size")
def reduce_bucket_size_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.reduce_bucket_size: 0`.

    ## Why is this bad?
    DeepSpeed before 0.19.8 accepted it and then divided by it during the backward pass (`ZeroDivisionError`,
    DeepSpeed#8260); 0.19.8 refuses it at startup ("Input should be greater than 0").

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "reduce_bucket_size": 0}}
    ```
    Use instead: `"reduce_bucket_size": 5e8` (the default).
    ```json
    {"zero_optimization": {"stage": 1, "reduce_bucket_size": 5e8}}
    ```
    """
    if ctx.effective.zero_reduce_bucket_size.value == 0:
        version = stack_version(ctx, "deepspeed")
        refuses = None if version is None else version_at_least(version, "0.19.8")
        effect = ("DeepSpeed divides by it (ZeroDivisionError) or, from 0.19.8, refuses it" if refuses is None
                  else f"DeepSpeed {version} refuses it at startup" if refuses
                  else f"DeepSpeed {version} divides by it in the backward pass (ZeroDivisionError)")
        yield Finding("deepspeed", (ZERO, "reduce_bucket_size"), f"`reduce_bucket_size` is 0: {effect}")


@rule("AW219", "gradient-allreduce-sum-with-zero3", Severity.ERROR,
      fix='Use `"gradient_allreduce_op": "mean"` (the default)')
def gradient_allreduce_sum_with_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gradient_allreduce_op: "sum"` with ZeRO stage 3 or ZenFlow.

    ## Why is this bad?
    DeepSpeed refuses it: "gradient_allreduce_op='sum' is not supported with ZeRO stage 3" (resp. ZenFlow).

    ## Example
    ```json
    {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}
    ```
    Use instead: `"mean"`.
    ```json
    {"gradient_allreduce_op": "mean", "zero_optimization": {"stage": 3}}
    ```
    """
    effective = ctx.effective
    if effective.gradient_allreduce_op.value != "sum":
        return
    if zero_stage(ctx) == 3:
        yield Finding("deepspeed", ("gradient_allreduce_op",),
                      "gradient_allreduce_op 'sum' is not supported with ZeRO stage 3")
    elif effective.zenflow.value is True:
        yield Finding("deepspeed", ("gradient_allreduce_op",), "gradient_allreduce_op 'sum' is not supported "
                                                               "with "
                                                                 "ZenFlow")


@rule("AW220", "compute-grad-norm-disabled-unsupported", Severity.ERROR,
      fix="Remove `compute_grad_norm: false`, or use ZeRO-1/2 with gradient_clipping 0 and no optimizer "
          "offload")
def compute_grad_norm_disabled_unsupported(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.compute_grad_norm: false` where DeepSpeed 0.19.8 does not allow it: ZeRO stage 0
    or 3, gradient clipping above 0 (the default is 1.0), optimizer offload, or ZenFlow.

    ## Why is this bad?
    DeepSpeed refuses it: "compute_grad_norm=false is supported only with ZeRO Stage 1 or 2", or at engine
    start "zero_optimization.compute_grad_norm=false requires gradient_clipping=0".

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}}
    ```
    Use instead: add `"gradient_clipping": 0.0`, or drop `compute_grad_norm`.
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}, "gradient_clipping": 0.0}
    ```
    """
    effective = ctx.effective
    if effective.zero_compute_grad_norm.value is not False:
        return
    stage, clipping = zero_stage(ctx), effective.gradient_clipping.value
    path = (ZERO, "compute_grad_norm")
    if stage in (0, 3):
        yield Finding("deepspeed", path, f"compute_grad_norm=false is supported only with ZeRO stage 1 or 2 "
                                         f"(zero_stage is {stage})")
    elif isinstance(clipping, float) and clipping > 0:
        yield Finding("deepspeed", path, "compute_grad_norm=false requires gradient_clipping 0 (it is "
                                         f"{clipping})")
    elif effective.offload_optimizer.value in ("cpu", "nvme") or effective.zenflow.value is True:
        yield Finding("deepspeed", path, "compute_grad_norm=false does not work with optimizer offload or "
                                         "ZenFlow")


@rule("AW224", "pipeline-with-zero-partitioned-gradients", Severity.WARNING,
      fix="Use ZeRO stage 0 or 1 with pipeline parallelism")
def pipeline_with_zero_partitioned_gradients(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `pipeline` block together with ZeRO stage 2 or 3.

    ## Why is this bad?
    If the model is a `PipelineModule` (which the `pipeline` block is for), DeepSpeed refuses the combination:
    "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".

    ## Example
    ```json
    {"pipeline": {"stages": 4}, "zero_optimization": {"stage": 2}}
    ```
    Use instead: `"stage": 1`.
    ```json
    {"pipeline": {"stages": 4}, "zero_optimization": {"stage": 1}}
    ```
    """
    stage = zero_stage(ctx)
    if ctx.deepspeed is not None and ctx.deepspeed.has("pipeline") and stage in (2, 3):
        yield Finding("deepspeed", ("pipeline",), "pipeline parallelism does not work with ZeRO stage "
                                                  f"{stage}")


@rule("AW229", "stage3-key-given-twice", Severity.ERROR, fix="Keep one of the two spellings")
def stage3_key_given_twice(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a ZeRO setting written under both of its names, such as `stage3_prefetch_bucket_size` and
    `prefetch_bucket_size`, or a deprecated key next to its replacement (`cpu_offload` with
    `offload_optimizer`).

    ## Why is this bad?
    DeepSpeed refuses the file: the short name is rejected as an extra input when the `stage3_` alias is also
    given, and "Cannot provide deprecated parameter 'cpu_offload' and replacing parameter 'offload_optimizer'
    together".

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9, "max_live_parameters": 1e9}}
    ```
    Use instead: only `"stage3_max_live_parameters": 1e9`.
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9}}
    ```
    """
    if ctx.deepspeed is None or not ctx.deepspeed.section(ZERO):
        return  # without this, every `check` of a plain YAML would build the DeepSpeed models (~80 ms)
    from accelwiz.config.deepspeed_zero import STAGE3_ALIASES

    zero = ctx.deepspeed.section(ZERO)
    pairs = [*STAGE3_ALIASES.items(), ("cpu_offload", "offload_optimizer"),
             ("cpu_offload_param", "offload_param"),
             ("stage3_gather_fp16_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save"),
             ("stage3_gather_fp16_weights_on_model_save", "gather_16bit_weights_on_model_save")]
    for first, second in pairs:
        if first in zero and second in zero:
            yield Finding("deepspeed", (ZERO, second),
                          f"`{ZERO}.{first}` and `{ZERO}.{second}` are the same setting; DeepSpeed refuses "
                          "both together")


@rule("AW230", "legacy-stage1", Severity.ERROR, fix="Remove `legacy_stage1`")
def legacy_stage1(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.legacy_stage1: true`.

    ## Why is this bad?
    DeepSpeed raises at engine start: "The deprecated version of ZeRO Stage 1 is not supported in deepspeed >=
    0.5.9".

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "legacy_stage1": true}}
    ```
    Use instead: `{"zero_optimization": {"stage": 1}}`.
    ```json
    {"zero_optimization": {"stage": 1}}
    ```
    """
    if ctx.effective.zero_legacy_stage1.value is True:
        yield Finding("deepspeed", (ZERO, "legacy_stage1"), "the legacy ZeRO stage 1 implementation was "
                                                            "removed")


@rule("AW231", "gradient-prescale-with-zero", Severity.ERROR,
      fix="Remove `prescale_gradients` / `gradient_predivide_factor`")
def gradient_prescale_with_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `prescale_gradients: true` or `gradient_predivide_factor` other than 1.0 with ZeRO-2
    (reduce-scatter, the default) or ZeRO-3.

    ## Why is this bad?
    The ZeRO optimizer refuses it when it is built: "pre-scale gradients is not yet supported with ZeRO-2 with
    reduce scatter enabled" / "gradient_predivide_factor != 1.0 is not yet supported with ZeRO-2 ...".

    ## Example
    ```json
    {"prescale_gradients": true, "zero_optimization": {"stage": 2}}
    ```
    Use instead: drop `prescale_gradients`.
    ```json
    {"zero_optimization": {"stage": 2}}
    ```
    """
    effective, stage = ctx.effective, zero_stage(ctx)
    if ctx.deepspeed is None or stage not in (2, 3):
        return
    if stage == 2 and effective.zero_reduce_scatter.value is False:
        return
    factor = effective.gradient_predivide_factor.value
    if effective.prescale_gradients.value is True:
        yield Finding("deepspeed", ("prescale_gradients",), "prescale_gradients is not supported with "
                                                            f"ZeRO-{stage}")
    if factor is not None and factor != 1.0:
        yield Finding("deepspeed", ("gradient_predivide_factor",),
                      f"gradient_predivide_factor {factor} is not supported with ZeRO-{stage}")
