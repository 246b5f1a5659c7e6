"""AW501, AW505: will the training fit on the GPU? Run when `--model` is given (the workload); AW501 also needs
`--system`. The host's memory is judged in memory_host.py (AW502, AW506), the sharding advice in
sharding_advice.py (AW503, AW504); what they share, in memory_view.py.
"""

from __future__ import annotations

import shlex

from collections.abc import Iterator

from accelwiz.estimate.verdict import gpu_verdict
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.memory_view import anchor, fastest_fitting, gib, judged_gpu, posttraining_for
from accelwiz.rules.rule import Needs, rule
from accelwiz.vocab import HEADROOM


@rule(
    "AW501",
    "estimate-exceeds-gpu-memory",
    Severity.ERROR,
    needs=Needs.WORKLOAD,
    fix="Shard more (a higher ZeRO stage or FSDP full shard), offload, lower the micro-batch, or turn on "
    "gradient checkpointing",
)
def estimate_exceeds_gpu_memory(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Estimates training memory per GPU for the model given with `--model` under the config's strategy, and
    reports when it exceeds the memory of the GPUs in the `--system` profile.

    ## Why is this bad?
    The run fails with `CUDA out of memory`, often only after loading the model, compiling, or reaching the
    longest batch, minutes or hours in.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-8b --micro-batch 4 --seq-len 4096 --gradient-checkpointing
    distributed_type: MULTI_GPU   # DDP: 18 bytes per parameter on every GPU
    num_processes: 8
    ```

    Use instead: the strategy `accelwiz estimate` recommends, here ZeRO-2 (without gradient checkpointing even
    ZeRO-3 does not fit at this micro-batch):
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-8b --micro-batch 4 --seq-len 4096 --gradient-checkpointing
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 2
    ```
    """
    judged = judged_gpu(ctx)
    if judged is None or judged.verdict != "does not fit":  # tight is AW505's
        return
    if posttraining_for(ctx) is not None:
        return  # a DPO/GRPO run over the GPU is AW813's, which names the reference model and the phase
    strategy, estimate, capacity, _ = judged
    gpu_name = ctx.system.gpus[0].name
    role, path = anchor(ctx, strategy)
    better = fastest_fitting(ctx, strategy, capacity)
    fix = (
        f"Use {better.strategy.label} ({gib(better.per_gpu_total)} per GPU), or see `accelwiz estimate --config "
        f"{shlex.quote(str(ctx.accelerate.path)) if ctx.accelerate is not None else 'FILE'} --compare`"
        if better
        else None
    )
    w = estimate.workload
    yield Finding(
        role,
        path,
        f"estimated {gib(estimate.per_gpu_total)} per GPU with {strategy.label} over "
        f"{strategy.world_size} GPU(s) ({w.model.name}, micro-batch {w.micro_batch} × {w.seq_len}) "
        f"exceeds the {gib(capacity)} CUDA can allocate on {gpu_name}",
        fix,
    )


@rule(
    "AW505",
    "estimate-near-gpu-memory",
    Severity.WARNING,
    needs=Needs.WORKLOAD,
    fix="Lower the micro-batch, turn on gradient checkpointing, or shard more, to keep 10% of the GPU free",
)
def estimate_near_gpu_memory(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Reports a training memory estimate per GPU that fits the GPU of the `--system` profile (or the plan's)
    but leaves less than 10% of it free: the verdict "tight" that `accelwiz estimate` prints for the same
    inputs.

    ## Why is this bad?
    What no formula sees (allocator fragmentation, kernels' workspaces, the longest batch, pinned memory) takes
    a few GiB: a run this close to the limit may go out of memory hours in.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-3.1-8b --micro-batch 4 --seq-len 5120 --gradient-checkpointing
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 1
    ```
    (about 76.0 of the 79.2 GiB CUDA can allocate per GPU, the allocator's reserve and the CUDA runtime included).

    Use instead: `zero_stage: 3` (67.6 GiB), or micro-batch 3.
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-3.1-8b --micro-batch 4 --seq-len 5120 --gradient-checkpointing
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 3
    ```
    """
    judged = judged_gpu(ctx)
    if judged is None or judged.verdict != "tight":
        return
    from accelwiz.rules.trl_memory import vllm_colocated

    if vllm_colocated(ctx):
        return  # the GPU is shared with vLLM: AW812's
    strategy, estimate, capacity, _ = judged
    gpu_name = ctx.system.gpus[0].name
    role, path = anchor(ctx, strategy)
    w = estimate.workload
    gpu = gpu_verdict(estimate, capacity, HEADROOM)  # the words `estimate` prints for the same inputs
    where = (f"above {HEADROOM:.0%} of the {gib(capacity)} CUDA can allocate on {gpu_name}" if not gpu.retries
             else f"within the {gib(capacity)} CUDA can allocate on {gpu_name}{gpu.retry_note}")
    yield Finding(
        role,
        path,
        f"estimated {gib(gpu.need)} per GPU with {strategy.label} ({w.model.name}, micro-batch "
        f"{w.micro_batch} × {w.seq_len}) is tight: {where}",
    )
