"""AW814: how GRPO generates under DeepSpeed ZeRO-3 (needs `check --kind grpo` with the training arguments).

Without vLLM, GRPOTrainer generates with the policy itself inside `unwrap_model_for_generation` (trl 1.16
grpo_trainer.py `_generate_single_turn`, `gather_deepspeed3_params=self.args.ds3_gather_for_generation`). Under
ZeRO-3, trl/models/utils.py `_unwrap_model_for_generation` gathers every parameter once for the whole generate
call when the flag is true; when it is false it yields the partitioned model, whose ZeRO-3 hooks all-gather each
layer again for every decoding step. vLLM generation never reads the flag (its weights are synced separately).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.trainer_wrapper import _deepspeed_stage
from accelwiz.rules.trl_batch import trl_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


@rule("AW814", "zero3-generation-without-gather", Severity.WARNING,
      fix="Leave ds3_gather_for_generation at its default (true); if the gathered model does not fit one GPU, "
          "generate with vLLM (--use_vllm --vllm_mode colocate) or shorten max_completion_length")
def zero3_generation_without_gather(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a GRPO run under DeepSpeed ZeRO-3 that generates with the policy itself (no `use_vllm`) while
    `ds3_gather_for_generation` is false.

    ## Why is this bad?
    The weights then stay partitioned during generation, so every one of the `max_completion_length` decoding
    steps all-gathers every layer across the processes (GRPOConfig's docstring: "at the cost of slower
    generation"). The first step can take hours and looks like a hang (trl#3858; the maintainer's fix: leave the
    flag at true). It only pays off for a policy too large to gather on one GPU.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml --kind grpo -- --ds3_gather_for_generation false --num_generations 8
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 3
      zero3_init_flag: true
    ```
    Use instead: drop `--ds3_gather_for_generation false`.
    """
    found = trl_view(ctx, "grpo")
    if found is None:
        return
    args = found[0]
    if args.trl.get("ds3_gather_for_generation", True) or args.trl.get("use_vllm"):
        return
    if _deepspeed_stage(ctx) != 3:
        return  # the flag only applies to ZeRO-3 (DistributedBackend.is_zero3)
    yield Finding(None, (), f"{args.trl_where('ds3_gather_for_generation')} under ZeRO-3 without vLLM: every "
                            f"decoding step of up to {args.trl_where('max_completion_length')} tokens all-gathers "
                            "the partitioned weights layer by layer")
