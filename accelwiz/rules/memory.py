"""AW5xx: will the training fit? Run when `--model` is given (the workload); AW501-AW503 also need `--system`.

The strategy is built from the config's effective values (`estimate.strategy.strategy_from_effective` of
`ctx.effective`): distributed_type, num_processes / num_machines, the ZeRO stage and offload devices from the
DeepSpeed JSON or the inline `deepspeed_config`, and the FSDP sharding strategy, version and offload flag.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from accelwiz.estimate.verdict import RETRIES, Verdict, judge
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule
from accelwiz.vocab import HEADROOM

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate
    from accelwiz.estimate.posttraining import PostTrainingEstimate
    from accelwiz.estimate.strategy import Strategy

SMALL_MODEL_BYTES = 16 * 2**30  # a DDP footprint that fits any current data-center GPU


def _gib(value: float) -> str:
    return f"{value / 2**30:.1f} GiB"


def _plan(ctx: CheckContext) -> tuple[Strategy, MemoryEstimate] | None:
    """The config's strategy and its estimate, or None when the config does not say enough."""
    from accelwiz.estimate.strategy import strategy_from_effective

    strategy = strategy_from_effective(ctx.effective)
    if strategy is None or ctx.workload is None:
        return None
    if ctx.effective.json_alone:
        strategy = _lone_json_world(ctx, strategy)
    if ctx.launch.machines_as_launched:
        # under SLURM the YAML describes one node and srun adds the others: judge the run that happens
        strategy = replace(strategy, nodes=ctx.launch.machines_as_launched)
    return strategy, _estimate(ctx, strategy)


def _estimate(ctx: CheckContext, strategy: Strategy) -> MemoryEstimate:
    """The run's estimate under `strategy`: for DPO/GRPO the TRL run's every phase (reference model, generation),
    as AW813 judges it; else the training step's."""
    post = _posttraining(ctx, strategy)
    if post is not None:
        return post.combined
    from accelwiz.estimate.memory import estimate_memory

    return estimate_memory(ctx.workload, strategy, _gpu_name(ctx))


def _posttraining(ctx: CheckContext, strategy: Strategy | None = None) -> PostTrainingEstimate | None:
    """The DPO/GRPO estimate (rules/trl_memory.py) when the run trains with TRL's DPO or GRPO, else None."""
    from accelwiz.rules.trl_batch import trl_view

    found = trl_view(ctx)
    if found is None or found[0].kind not in ("dpo", "grpo"):
        return None
    from accelwiz.rules.trl_memory import posttraining_estimate

    return posttraining_estimate(ctx, found[0], strategy)


def _lone_json_world(ctx: CheckContext, strategy: Strategy) -> Strategy:
    """A DeepSpeed JSON alone runs on as many processes as its launcher starts: check's --num-processes (torchrun,
    the Trainer's world) when given, else every GPU of the --system node (the `deepspeed` launcher's default)."""
    nodes = ctx.system.num_machines if ctx.system is not None else 1
    world = getattr(ctx.training_args, "world_size", None)
    if world is None and ctx.system is not None and ctx.system.gpus:
        world = ctx.system.gpu_count * nodes
    if not world or world < 2:
        return strategy
    kind = "ddp" if strategy.kind == "single" else strategy.kind
    return replace(strategy, kind=kind, gpus_per_node=max(1, world // nodes), nodes=nodes)


def _anchor(ctx: CheckContext, strategy: Strategy) -> tuple[str | None, tuple[str, ...]]:
    """Where a memory finding points: the ZeRO stage, the FSDP sharding, or the distributed type."""
    if strategy.is_deepspeed and ctx.deepspeed is not None:
        return "deepspeed", ("zero_optimization", "stage")
    if ctx.accelerate is None:
        return "deepspeed", ("zero_optimization",)
    if strategy.is_deepspeed and ctx.accelerate.has("deepspeed_config", "zero_stage"):
        return "accelerate", ("deepspeed_config", "zero_stage")
    if strategy.is_fsdp and ctx.accelerate.has("fsdp_config"):
        return "accelerate", ("fsdp_config",)
    return "accelerate", ("distributed_type",)


def _gpu_name(ctx: CheckContext) -> str | None:
    """The GPU the run is checked against: the runtime beside the tensors depends on its generation, as in
    `estimate`, so check, init and estimate give one number for one run."""
    return ctx.system.gpus[0].name if ctx.system is not None and ctx.system.gpus else None


def _gpu_bytes(ctx: CheckContext) -> tuple[int, str] | None:
    if ctx.system is None or not ctx.system.min_gpu_memory_bytes:
        return None
    return ctx.system.min_gpu_memory_bytes, ctx.system.gpus[0].name


class _Judged(NamedTuple):
    """A strategy's estimate beside the memory it is judged against (one GPU, or one machine's RAM)."""

    strategy: Strategy
    estimate: MemoryEstimate
    capacity: int
    verdict: Verdict


def _judged_gpu(ctx: CheckContext) -> _Judged | None:
    """The per-GPU verdict the "does not fit" (AW501) and "tight" (AW505) rules share."""
    target, plan = _gpu_bytes(ctx), _plan(ctx)
    if target is None or plan is None:
        return None
    strategy, estimate = plan
    return _Judged(strategy, estimate, target[0], judge(estimate.need_on(target[0]), target[0], HEADROOM))


def _judged_host(ctx: CheckContext) -> _Judged | None:
    """The per-machine host RAM verdict the AW502 and AW506 rules share; None where the RAM is unknown (0)."""
    plan = _plan(ctx)
    if ctx.system is None or plan is None or not ctx.system.host.memory_total_bytes:
        return None
    strategy, estimate = plan
    ram = ctx.system.host.memory_total_bytes
    return _Judged(strategy, estimate, ram, judge(estimate.host_bytes, ram, HEADROOM))


def _fastest_fitting(ctx: CheckContext, strategy: Strategy, gpu_bytes: int) -> MemoryEstimate | None:
    """The fastest candidate for the same GPU count that fits, from the same library where one does."""
    from accelwiz.estimate.recommend import Budget
    from accelwiz.estimate.strategy import candidate_strategies

    budget = Budget(gpu_bytes, ctx.system.host.memory_total_bytes if ctx.system else None, HEADROOM)
    # fp8 from the YAML cannot go with a deepspeed_config_file (accelerate refuses mixed_precision beside it)
    fp8 = str(ctx.effective.mixed_precision.value).lower() == "fp8" and not strategy.is_deepspeed
    for candidate in candidate_strategies(strategy.gpus_per_node, strategy.nodes):
        if fp8 and candidate.is_deepspeed:
            continue
        if candidate.is_fsdp and strategy.is_fsdp:
            candidate = replace(candidate, fsdp_version=strategy.fsdp_version)
        estimate = _estimate(ctx, candidate)
        if budget.fits(estimate):
            return estimate
    return None


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
    judged = _judged_gpu(ctx)
    if judged is None or judged.verdict != "does not fit":  # tight is AW505's
        return
    if _posttraining(ctx) is not None:
        return  # a DPO/GRPO run over the GPU is AW813's, which names the reference model and the phase
    strategy, estimate, capacity, _ = judged
    gpu_name = ctx.system.gpus[0].name
    role, path = _anchor(ctx, strategy)
    better = _fastest_fitting(ctx, strategy, capacity)
    fix = (
        f"Use {better.strategy.label} ({_gib(better.per_gpu_total)} per GPU), or see `accelwiz estimate "
        f"--compare`"
        if better
        else None
    )
    w = estimate.workload
    yield Finding(
        role,
        path,
        f"estimated {_gib(estimate.per_gpu_total)} per GPU with {strategy.label} over "
        f"{strategy.world_size} GPU(s) ({w.model.name}, micro-batch {w.micro_batch} × {w.seq_len}) "
        f"exceeds the {_gib(capacity)} of {gpu_name}",
        fix,
    )


@rule(
    "AW502",
    "offload-exceeds-host-memory",
    Severity.ERROR,
    needs=Needs.WORKLOAD,
    fix="Offload less (optimizer only, or none), use NVMe offload, or add nodes",
)
def offload_exceeds_host_memory(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Estimates host RAM per node (offloaded optimizer states and parameters, or model loading, whichever is
    larger) and reports when it exceeds the RAM of the `--system` profile.

    The offloaded states are counted as DeepSpeed allocates them (checked on a real DeepSpeedCPUAdam engine):
    ZeRO-3 with optimizer offload holds 18 bytes per parameter in bf16 (fp32 master, Adam m and v, fp32
    gradients, and a 16-bit gradient partition), 20 with parameter offload, divided among the nodes, plus
    2 GiB per process for Python, torch and CUDA. DeepSpeed's own estimator
    (`estimate_zero3_model_states_mem_needs`) counts 16 (18) and multiplies by a 1.5 margin, so it prints more:
    788.5 GiB where accelwiz says 607.4 GiB for a 70B model on 2 nodes x 8 GPUs (docs/performance.md, "Host RAM").

    ## Why is this bad?
    The kernel's OOM killer ends a process (often reported only as `exit code -9` by the launcher), or the
    node swaps until the step time collapses.

    ## Example
    ```yaml
    # accelwiz check --system 4xA100-40GB --model llama-3.1-70b
    distributed_type: DEEPSPEED
    num_processes: 4
    deepspeed_config:
      zero_stage: 3
      offload_optimizer_device: cpu
      offload_param_device: cpu
    ```
    on a node with 340 GiB of RAM (70B × 20 bytes of offloaded states = 1.4 TB).

    Use instead: more nodes, or `offload_optimizer_device: nvme`.
    """
    judged = _judged_host(ctx)
    if judged is None or judged.verdict != "does not fit":  # tight is AW506's
        return
    strategy, estimate, ram, _ = judged
    role, path = _anchor(ctx, strategy)
    what = (
        "offloaded states"
        if "cpu" in (strategy.offload_optimizer, strategy.offload_param)
        else "model loading"
    )
    yield Finding(
        role,
        path,
        f"estimated {_gib(estimate.host_bytes)} of host RAM per node for {what} "
        f"({strategy.label}, {ctx.workload.model.name}) exceeds the node's {_gib(ram)}",
    )


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
    target, plan = _gpu_bytes(ctx), _plan(ctx)
    if target is None or plan is None:
        return
    strategy, estimate = plan
    better = _fastest_fitting(ctx, strategy, target[0])
    if better is None or better.strategy.speed_rank >= strategy.speed_rank:
        return
    role, path = _anchor(ctx, strategy)
    yield Finding(
        role,
        path,
        f"{strategy.label} is slower than needed: {better.strategy.label} fits in "
        f"{_gib(better.per_gpu_total)} of {_gib(target[0])} per GPU ({better.workload.model.name}, "
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
    plan = _plan(ctx)
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
    role, path = _anchor(ctx, strategy)
    yield Finding(
        role,
        path,
        f"{strategy.label} for {ctx.workload.model.name} "
        f"({ctx.workload.model.num_parameters / 1e6:,.0f}M parameters): plain DDP needs only "
        f"{_gib(ddp.per_gpu_total)} per GPU",
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
    # accelwiz check --system 8xH100-80GB --model llama-3.1-8b --micro-batch 4 --seq-len 4608 --gradient-checkpointing
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 1
    ```
    (about 75.0 of 79.6 GiB per GPU, the allocator's reserve and the CUDA runtime included).

    Use instead: `zero_stage: 3` (66.8 GiB), or micro-batch 3.
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-3.1-8b --micro-batch 4 --seq-len 4608 --gradient-checkpointing
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 3
    ```
    """
    judged = _judged_gpu(ctx)
    if judged is None or judged.verdict != "tight":
        return
    from accelwiz.rules.trl_memory import vllm_colocated

    if vllm_colocated(ctx):
        return  # the GPU is shared with vLLM: AW812's
    strategy, estimate, capacity, _ = judged
    gpu_name = ctx.system.gpus[0].name
    role, path = _anchor(ctx, strategy)
    w = estimate.workload
    yield Finding(
        role,
        path,
        f"estimated {_gib(estimate.per_gpu_total)} per GPU with {strategy.label} ({w.model.name}, micro-batch "
        f"{w.micro_batch} × {w.seq_len}) is tight: above {HEADROOM:.0%} of the {_gib(capacity)} of {gpu_name}"
        + (RETRIES if estimate.retries_on(capacity) else ""),
    )


@rule(
    "AW506",
    "host-memory-tight",
    Severity.WARNING,
    needs=Needs.WORKLOAD,
    fix="Offload less, or use machines with more RAM, to keep 10% of the host RAM free",
)
def host_memory_tight(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Reports a host RAM estimate per machine (offloaded states, or model loading) that fits the RAM of the
    `--system` profile (or the plan's) but leaves less than 10% of it free: the verdict "tight".

    ## Why is this bad?
    The data loader workers, the page cache of the checkpoint being read and the launcher itself share that
    RAM; the kernel's OOM killer ends a rank (`exit code -9`) or the machine swaps.

    ## Example
    ```yaml
    # accelwiz check --system 1xRTX4090 --model 3.2B
    distributed_type: DEEPSPEED
    num_processes: 1
    deepspeed_config:
      zero_stage: 3
      offload_optimizer_device: cpu
      offload_param_device: cpu
    ```
    a 3.2B-parameter model whose offloaded states take about 95% of the workstation's 64 GiB of RAM.

    Use instead: `offload_param_device: none`, or more machines.
    ```yaml
    # accelwiz check --system 1xRTX4090 --model 3.2B
    distributed_type: DEEPSPEED
    num_processes: 1
    deepspeed_config:
      zero_stage: 3
      offload_optimizer_device: cpu
      offload_param_device: none
    ```
    """
    judged = _judged_host(ctx)
    if judged is None or judged.verdict != "tight":
        return
    strategy, estimate, ram, _ = judged
    role, path = _anchor(ctx, strategy)
    yield Finding(
        role,
        path,
        f"estimated {_gib(estimate.host_bytes)} of host RAM per machine ({strategy.label}, "
        f"{ctx.workload.model.name}) is tight: above {HEADROOM:.0%} of the machine's {_gib(ram)}",
    )
