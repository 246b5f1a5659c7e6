"""AW813: the post-training estimate (estimate/posttraining.py) against the GPU: what AW501 judges for the SFT step,
with what DPO and GRPO add (the reference model, DPO's pairs, GRPO's generation and its ZeRO-3 gather)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule
from accelwiz.rules.trl_batch import trl_view

if TYPE_CHECKING:
    from accelwiz.estimate.posttraining import PostTrainingEstimate
    from accelwiz.rules.context import CheckContext


def posttraining_estimate(ctx: CheckContext, args: Any, strategy: Any = None) -> PostTrainingEstimate | None:
    """The run's post-training estimate: the settings resolved once from the plan and TRL's arguments
    (accelwiz.resolution.posttraining), the workload (`--model`, the plan, the files), the config's strategy;
    None when the config or the workload does not say enough."""
    from accelwiz.estimate.posttraining import estimate_posttraining
    from accelwiz.estimate.configured_strategy import strategy_from_effective
    from accelwiz.estimate.resolved import to_post_training
    from accelwiz.resolution.posttraining import resolve_posttraining

    strategy = strategy or strategy_from_effective(ctx.effective)  # another strategy: the rules' alternatives
    if strategy is None or ctx.workload is None:
        return None
    workload = ctx.workload
    resolved = resolve_posttraining(plan=ctx.plan, trl_args=args, max_positions=workload.model.max_position_embeddings)
    post = to_post_training(resolved, accumulation=args["gradient_accumulation_steps"])
    gpu = ctx.system.gpu_capacity_bytes if ctx.system is not None else None
    name = ctx.system.gpus[0].name if ctx.system is not None and ctx.system.gpus else None
    return estimate_posttraining(workload, strategy, post, gpu or None, gpu_name=name)


@rule("AW813", "posttraining-estimate-exceeds-gpu-memory", Severity.ERROR, needs=Needs.WORKLOAD,
      fix="Shard more (ZeRO-3 shards the reference too), use LoRA (no reference copy), lower the micro-batch or the "
          "lengths")
def posttraining_estimate_exceeds_gpu_memory(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With `--kind dpo|grpo`, `--model` and `--system`, estimates the TRL run (estimate/posttraining.py: DPO's
    chosen and rejected in one batch, the reference model, GRPO's generation and log-prob pass, ZeRO-3's gather
    for generation) under the config's strategy, and compares its peak with one GPU's memory. vLLM colocate's
    share is AW812's.

    ## Why is this bad?
    The reference model is a second copy of the policy (a whole one per GPU under ZeRO-1/2), and GRPO gathers
    the whole model under ZeRO-3 to generate: a run whose SFT step fits can run out of memory at its first step.

    ## Example
    ```yaml
    # accelwiz check --system 4xA100-40GB --model mistral-7b --micro-batch 1 --kind dpo
    distributed_type: DEEPSPEED
    num_processes: 4
    deepspeed_config:
      zero_stage: 2
    ```
    The reference copy adds 13.5 GiB to every phase. For a DPO/GRPO run this rule, not AW501, says the run does
    not fit, and AW505's "tight" judges the same estimate.
    """
    found = trl_view(ctx)
    if found is None or ctx.system is None or not ctx.system.gpu_capacity_bytes:
        return
    args = found[0]
    if vllm_colocated(ctx):
        return  # AW812
    estimate = posttraining_estimate(ctx, args)
    if estimate is None:
        return
    gpu = ctx.system.gpu_capacity_bytes
    total = estimate.combined.need_on(gpu)
    if total <= gpu:
        return
    peak = estimate.combined.peak_phase
    yield Finding(None, (), f"the {args.kind.upper()} run needs {total / 2**30:.1f} GiB per GPU at its {peak} peak "
                            f"(reference {estimate.reference_bytes / 2**30:.1f} GiB) under "
                            f"{estimate.combined.strategy.label}, more than the {gpu / 2**30:.1f} GiB of a GPU")


def vllm_colocated(ctx: CheckContext) -> bool:
    """A GRPO run whose vLLM engine shares the training GPU (colocate mode): AW812 judges that GPU's split, not
    the memory rules."""
    found = trl_view(ctx)
    if found is None:
        return False
    args = found[0]
    return bool(args.kind == "grpo" and args.trl["use_vllm"] and args.trl["vllm_mode"] == "colocate")
