"""AW406, AW407: master weights, gradients and optimizer states kept in 16 bits (`bf16_master_weights_and_grads`,
`bf16_optimizer_states`, `fp16_master_weights_and_grads`), which DeepSpeed accepts only together and only with
ZeRO. The other precision rules (AW401-AW405, AW408, AW409) are in `precision.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import dotted_path, zero_stage
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule


@rule("AW406", "bf16-optimizer-states-without-master-weights", Severity.ERROR,
      fix='Add `"bf16_master_weights_and_grads": true`, or remove `bf16_optimizer_states`')
def bf16_optimizer_states_without_master_weights(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `bf16.bf16_optimizer_states: true` without `bf16.bf16_master_weights_and_grads: true`.

    ## Why is this bad?
    DeepSpeed refuses it: "bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled."

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_optimizer_states": true}}
    ```
    Use instead: also set `"bf16_master_weights_and_grads": true`.
    ```json
    {"bf16": {"enabled": true, "bf16_optimizer_states": true, "bf16_master_weights_and_grads": true},
     "zero_optimization": {"stage": 2}}
    ```
    """
    effective = ctx.effective
    if effective.bf16_optimizer_states.value is True and effective.bf16_master_weights_and_grads.value is not True:
        yield Finding("deepspeed", ("bf16", "bf16_optimizer_states"),
                      "bf16_optimizer_states requires bf16_master_weights_and_grads")


@rule("AW407", "master-weights-without-zero", Severity.ERROR, fix="Use ZeRO stage 1, 2 or 3")
def master_weights_without_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fp16_master_weights_and_grads`, `bf16_master_weights_and_grads` or `bf16_optimizer_states` with
    ZeRO stage 0.

    ## Why is this bad?
    DeepSpeed refuses it: "Bf16_master_weights_and_grads is only supported with ZeRO Stage 1, 2, or 3."

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 0}}
    ```
    Use instead: `"stage": 2`.
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 2}}
    ```
    """
    effective = ctx.effective
    if ctx.deepspeed is None or zero_stage(ctx) != 0:
        return
    for path, value in ((("fp16", "fp16_master_weights_and_grads"), effective.fp16_master_weights_and_grads),
                        (("bf16", "bf16_master_weights_and_grads"), effective.bf16_master_weights_and_grads),
                        (("bf16", "bf16_optimizer_states"), effective.bf16_optimizer_states)):
        if value.value is True:
            yield Finding("deepspeed", path, f"`{dotted_path(path)}` needs ZeRO stage 1, 2 or 3 "
                                             "(zero_stage is 0)")
