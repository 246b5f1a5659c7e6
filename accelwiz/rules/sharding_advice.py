"""AW503, AW504: sharding beyond what the run needs (a faster strategy fits), or a model too small to shard."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.memory_view import SMALL_MODEL_BYTES, anchor, fastest_fitting, gib, gpu_bytes, planned_estimate
from accelwiz.rules.rule import Needs, rule


@rule(
    "AW503",
    "sharding-beyond-need",
    Severity.WARNING,
    needs=Needs.WORKLOAD,
    fix="Use the faster strategy that fits",
)
def sharding_beyond_need(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Reports a strategy that shards or offloads more than the workload needs on the `--system` machine: a
    faster one (lower ZeRO stage, shard-grad-op instead of full shard, no offload) fits within 90% of the
    GPU memory and the host RAM.

    ## Why is this bad?
    Each step up costs speed for memory that is not needed: ZeRO-3 and FSDP full shard gather parameters again
    in backward (1.5× the communication of DDP), and CPU offload runs the optimizer on the CPU and moves
    gradients over PCIe every step, often several times slower.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --model gpt2
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}
    ```
    for gpt2 on 8 × 80 GiB GPUs.

    Use instead: `{"zero_optimization": {"stage": 1}}`, or plain DDP.
    ```yaml
    # accelwiz check --system 8xH100-80GB --model gpt2
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    """
    target, plan = gpu_bytes(ctx), planned_estimate(ctx)
    if target is None or plan is None:
        return
    strategy, estimate = plan
    better = fastest_fitting(ctx, strategy, target[0])
    if better is None or better.strategy.speed_rank >= strategy.speed_rank:
        return
    role, path = anchor(ctx, strategy)
    yield Finding(
        role,
        path,
        f"{strategy.label} is slower than needed: {better.strategy.label} fits in "
        f"{gib(better.per_gpu_total)} of {gib(target[0])} per GPU ({better.workload.model.name}, "
        f"micro-batch {better.workload.micro_batch} × {better.workload.seq_len})",
        f"Use {better.strategy.label}",
    )


@rule(
    "AW504",
    "sharding-small-model",
    Severity.INFO,
    needs=Needs.WORKLOAD,
    fix="Use plain DDP (`distributed_type: MULTI_GPU`) for a model this small",
)
def sharding_small_model(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Without a `--system` profile, reports ZeRO or FSDP for a workload whose plain-DDP footprint is at most
    16 GiB per GPU, small enough for any current data-center GPU. (With `--system`, AW503 judges precisely.)

    ## Why is this bad?
    Sharding buys memory with communication; on a small model there is no memory to buy, and the extra
    gathers, buckets and bookkeeping can even use more memory than DDP (DeepSpeed#6936).

    ## Example
    ```yaml
    # accelwiz check --model gpt2
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 3
    ```

    Use instead: `distributed_type: MULTI_GPU`.
    ```yaml
    # accelwiz check --model gpt2
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    """
    plan = planned_estimate(ctx)
    if ctx.system is not None or plan is None:
        return
    strategy, _ = plan
    if not (strategy.is_deepspeed or strategy.is_fsdp) or strategy.world_size < 2:
        return
    from accelwiz.estimate.memory import estimate_memory

    ddp = estimate_memory(
        ctx.workload, replace(strategy, kind="ddp", offload_optimizer="none", offload_param="none")
    )
    if ddp.per_gpu_total > SMALL_MODEL_BYTES:
        return
    role, path = anchor(ctx, strategy)
    yield Finding(
        role,
        path,
        f"{strategy.label} for {ctx.workload.model.name} "
        f"({ctx.workload.model.num_parameters / 1e6:,.0f}M parameters): plain DDP needs only "
        f"{gib(ddp.per_gpu_total)} per GPU",
    )
