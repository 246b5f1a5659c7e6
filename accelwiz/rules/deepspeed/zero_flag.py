"""AW235, AW236: `"zero_optimization": true` (or false), DeepSpeed's boolean form of the ZeRO block.

DeepSpeed 0.19.8 still reads it (runtime/zero/config.py `get_zero_config` -> `read_zero_config_deprecated`): true is
ZeRO stage 1, with the top-level `allgather_size` as the all-gather bucket, false is stage 0; it logs "this format
of ZeRO optimization setup is deprecated". The HF integrations do not: accelerate 1.15's `HfDeepSpeedConfig`
(utils/deepspeed.py, which transformers' subclasses) reads `zero_optimization.stage` through `find_config_node`,
which calls `.get` on the boolean, so `accelerate launch` and the Trainer stop with "'bool' object has no
attribute 'get'" (`set_stage_and_offload`, run when the config is loaded).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO, hf_launched
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

_FIX = 'Write the block: `"zero_optimization": {"stage": 1}` (`{"stage": 0}` for false)'


def _boolean_form(ctx: CheckContext) -> bool | None:
    """The boolean written as `zero_optimization` in the DeepSpeed JSON; None when the block is a mapping."""
    stage = ctx.effective.zero_stage
    if stage.path == (ZERO,) and isinstance(stage.written, bool):
        return stage.written
    return None


def _through_hf(ctx: CheckContext) -> bool:
    return hf_launched(ctx) or getattr(ctx, "training_args", None) is not None


@rule("AW235", "zero-optimization-boolean", Severity.WARNING, fix=_FIX)
def zero_optimization_boolean(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"zero_optimization": true` (or `false`) in a DeepSpeed JSON run by DeepSpeed itself (not through
    accelerate or the HF Trainer, which AW236 covers).

    ## Why is this bad?
    It works: DeepSpeed reads true as ZeRO stage 1 (false as stage 0) and logs "this format of ZeRO
    optimization setup is deprecated". But the stage is implicit (stage 1, not the 2 or 3 a reader may assume),
    no other ZeRO setting can be given, and the form cannot move to accelerate or the Trainer, which refuse it
    (DeepSpeed#118 ran such a config).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": true}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1}}
    ```
    """
    flag = _boolean_form(ctx)
    if flag is not None and not _through_hf(ctx):
        yield Finding("deepspeed", (ZERO,), f"`zero_optimization: {str(flag).lower()}` is DeepSpeed's deprecated "
                                            f"form: it runs ZeRO stage {1 if flag else 0}")


@rule("AW236", "zero-optimization-boolean-with-hf", Severity.ERROR, fix=_FIX)
def zero_optimization_boolean_with_hf(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"zero_optimization": true` (or `false`) in a DeepSpeed JSON launched through accelerate (named by
    the Accelerate YAML, or written for it with "auto" values) or given to the HF Trainer.

    ## Why is this bad?
    accelerate's `HfDeepSpeedConfig` reads `zero_optimization.stage` as a key of the block and calls `.get` on
    the boolean: the launch stops with "AttributeError: 'bool' object has no attribute 'get'" before training.
    Plain DeepSpeed still reads the form (as stage 1), which is why such files exist (AW235).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": true}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 1}}
    ```
    """
    flag = _boolean_form(ctx)
    if flag is not None and _through_hf(ctx):
        yield Finding("deepspeed", (ZERO,), f"`zero_optimization: {str(flag).lower()}`: accelerate and the Trainer "
                                            "read the ZeRO block as a mapping and stop with \"'bool' object has no "
                                            "attribute 'get'\"")
