"""AW216, AW217: the YAML's `zero3_init_flag` (`deepspeed.zero.Init`, which partitions the model while it is
created) against the ZeRO stage. The other ZeRO settings are in `zero.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.resolution.stack import ZERO3_INIT_FLAG_IGNORED_SINCE
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import zero_stage
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.installed import stack_at_least, stack_version
from accelwiz.rules.rule import rule


@rule("AW216", "zero3-init-flag-below-zero3", Severity.WARNING, fix="Remove `zero3_init_flag`, or use ZeRO "
                                                                    "stage 3")
def zero3_init_flag_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero3_init_flag: true` in the YAML with a ZeRO stage other than 3.

    ## Why is this bad?
    `deepspeed.zero.Init` partitions the model while it is created, which only ZeRO-3 supports; accelerate
    warns "DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False." and loads a
    full copy on every rank (accelerate#2079).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 2
      zero3_init_flag: true
    ```
    Use instead: `zero3_init_flag: false` (or `zero_stage: 3`).
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 2
      zero3_init_flag: false
    ```
    """
    flag, stage = ctx.effective.zero3_init_flag, zero_stage(ctx)
    if flag.value is True and flag.role == "accelerate" and stage is not None and stage != 3:
        yield Finding("accelerate", flag.path,
                      f"`zero3_init_flag` only applies to ZeRO stage 3 (zero_stage is {stage}); accelerate "
                      "turns it off")


@rule("AW217", "zero3-without-init-flag", Severity.INFO, fix="Set `zero3_init_flag: true`")
def zero3_without_init_flag(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds ZeRO stage 3 with `zero3_init_flag: false` in the YAML.

    ## Why is this bad?
    Before accelerate 1.0 the flag decided whether transformers builds the model under `deepspeed.zero.Init`:
    without it every rank first loads the whole model into memory and the engine moves it to the GPU before
    partitioning it (deepspeed engine.py `_configure_distributed_model`: `self.module.to(self.device)` for a model
    not made under zero.Init), so a large model runs out of host or GPU memory while loading (accelerate#2079,
    trl#4100). Since accelerate 1.0 (e9e5a73, "multiple model/configuration DeepSpeed support") the plugin hands
    transformers its config whatever the flag (`DeepSpeedPlugin.set_deepspeed_weakref`), so a transformers model
    is built under zero.Init anyway and `false` is ignored there; only accelerate's own `GatheredParameters`
    reads it, and skips gathering the parameters that are partitioned all the same. The finding says which of
    the two the stack that will run does.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 3
      zero3_init_flag: false
    ```
    Use instead: `zero3_init_flag: true`.
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 3
      zero3_init_flag: true
    ```
    """
    flag = ctx.effective.zero3_init_flag
    if zero_stage(ctx) == 3 and flag.value is False and flag.role == "accelerate":
        yield Finding("accelerate", flag.path, _without_init_message(ctx))


# accelerate e9e5a73 (v1.0.0): set_deepspeed_weakref sets transformers' HfDeepSpeedConfig whatever zero3_init_flag
# (resolution/stack.py, the estimate's fact too)
FLAG_IGNORED_SINCE = ".".join(map(str, ZERO3_INIT_FLAG_IGNORED_SINCE))


def _without_init_message(ctx: CheckContext) -> str:
    if stack_at_least(ctx, "accelerate", FLAG_IGNORED_SINCE) is False:
        return (f"ZeRO-3 without `zero3_init_flag`: accelerate {stack_version(ctx, 'accelerate')} builds the model "
                "outside deepspeed.zero.Init, so every rank loads a full copy and moves it to its GPU before it is "
                "partitioned")
    version = stack_version(ctx, "accelerate") or f">= {FLAG_IGNORED_SINCE}"
    return (f"`zero3_init_flag: false` is ignored for a transformers model by accelerate {version} (since "
            f"{FLAG_IGNORED_SINCE} transformers builds it under deepspeed.zero.Init whatever the flag); only "
            "accelerate's GatheredParameters reads it, and then skips gathering partitioned parameters")
