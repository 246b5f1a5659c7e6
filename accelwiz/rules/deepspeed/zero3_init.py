"""AW216, AW217: the YAML's `zero3_init_flag` (`deepspeed.zero.Init`, which partitions the model while it is
created) against the ZeRO stage. The other ZeRO settings are in `zero.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import zero_stage
from accelwiz.rules.diagnostic import Finding, Severity
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
    Without `deepspeed.zero.Init` every rank first loads the whole model into memory and only then partitions
    it: a large model runs out of host or GPU memory while loading (accelerate#2079, trl#4100).

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
        yield Finding("accelerate", flag.path,
                      "ZeRO-3 without `zero3_init_flag`: every rank loads a full copy of the model before it "
                      "is partitioned")
