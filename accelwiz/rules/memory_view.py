"""What the memory rules (memory.py, memory_host.py, sharding_advice.py) share: the planned run's estimate, the
machine it is judged against, and where in the files a finding points.

The strategy is built from the config's effective values (`estimate.configured_strategy.strategy_from_effective` of
`ctx.effective`): distributed_type, num_processes / num_machines, the ZeRO stage and offload devices from the
DeepSpeed JSON or the inline `deepspeed_config`, and the FSDP sharding strategy, version and offload flag.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from accelwiz.estimate.verdict import Verdict, gpu_verdict, judge
from accelwiz.rules.context import CheckContext
from accelwiz.vocab import HEADROOM

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate
    from accelwiz.estimate.posttraining import PostTrainingEstimate
    from accelwiz.estimate.strategy import Strategy

SMALL_MODEL_BYTES = 16 * 2**30  # a DDP footprint that fits any current data-center GPU


def gib(value: float) -> str:
    return f"{value / 2**30:.1f} GiB"


def planned_estimate(ctx: CheckContext) -> tuple[Strategy, MemoryEstimate] | None:
    """The config's strategy and its estimate, or None when the config does not say enough."""
    from accelwiz.estimate.configured_strategy import strategy_from_effective

    strategy = strategy_from_effective(ctx.effective, _stack(ctx))
    if strategy is None and ctx.effective.distributed_type.value == "MULTI_CPU":
        from accelwiz.estimate.cpu import processes_strategy

        strategy = processes_strategy(max(1, ctx.effective.num_processes.value or 1))
    if strategy is None or ctx.workload is None:
        return None
    if ctx.effective.json_alone:
        strategy = _lone_json_world(ctx, strategy)
    if ctx.launch.machines_as_launched:
        # under SLURM the YAML describes one node and srun adds the others: judge the run that happens
        strategy = replace(strategy, nodes=ctx.launch.machines_as_launched)
    return strategy, estimate_for(ctx, strategy)


def _stack(ctx: CheckContext) -> Any:
    """The stack the unit's workload resolved (a --system profile's, --stack, else installed): whether ZeRO-3
    builds the model under zero.Init depends on its accelerate (estimate/configured_strategy.py)."""
    if ctx.workload is None or ctx.stack is not None:  # resolved with the unit's workload (unit_workload.py)
        return ctx.stack
    from accelwiz.rules.unit_workload import unit_resolution

    return unit_resolution(ctx).stack.value  # a workload the caller resolved (init's write check, run's preflight)


def estimate_for(ctx: CheckContext, strategy: Strategy) -> MemoryEstimate:
    """The run's estimate under `strategy`: for DPO/GRPO the TRL run's every phase (reference model, generation),
    as AW813 judges it; else the training step's."""
    if on_cpu(ctx, strategy):  # every tensor in host RAM, judged there (estimate/cpu.py)
        from accelwiz.estimate.cpu import as_cpu_run, cpu_estimate, cpu_strategy

        post = posttraining_for(ctx, cpu_strategy(strategy))
        return as_cpu_run(post.combined) if post is not None else cpu_estimate(ctx.workload, strategy)
    post = posttraining_for(ctx, strategy)
    if post is not None:
        return post.combined
    from accelwiz.estimate.memory import estimate_memory

    return estimate_memory(ctx.workload, strategy, _gpu_name(ctx))


def on_cpu(ctx: CheckContext, strategy: Strategy) -> bool:
    """The run trains on the CPU (estimate/cpu.py `runs_on_cpu`): its YAML, its plan's machine, or one process on
    a machine without GPUs."""
    from accelwiz.estimate.cpu import runs_on_cpu

    planned = ctx.plan.system.gpus_per_machine if ctx.plan is not None else None
    return runs_on_cpu(use_cpu=ctx.effective.use_cpu.value is True,
                       distributed_type=ctx.effective.distributed_type.value, planned_gpus=planned,
                       machine_gpus=None if ctx.system is None else len(ctx.system.gpus),
                       world_size=strategy.world_size)


def posttraining_for(ctx: CheckContext, strategy: Strategy | None = None) -> PostTrainingEstimate | None:
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


def anchor(ctx: CheckContext, strategy: Strategy) -> tuple[str | None, tuple[str, ...]]:
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


def gpu_bytes(ctx: CheckContext) -> tuple[int, str] | None:
    if ctx.system is None or not ctx.system.gpu_capacity_bytes:
        return None
    return ctx.system.gpu_capacity_bytes, ctx.system.gpus[0].name


class Judged(NamedTuple):
    """A strategy's estimate beside the memory it is judged against (one GPU, or one machine's RAM)."""

    strategy: Strategy
    estimate: MemoryEstimate
    capacity: int
    verdict: Verdict


def judged_gpu(ctx: CheckContext) -> Judged | None:
    """The per-GPU verdict the "does not fit" (AW501) and "tight" (AW505) rules share."""
    target, plan = gpu_bytes(ctx), planned_estimate(ctx)
    if target is None or plan is None:
        return None
    strategy, estimate = plan
    return Judged(strategy, estimate, target[0], gpu_verdict(estimate, target[0], HEADROOM).verdict)


def judged_host(ctx: CheckContext) -> Judged | None:
    """The per-machine host RAM verdict the AW502 and AW506 rules share; None where the RAM is unknown (0)."""
    plan = planned_estimate(ctx)
    if ctx.system is None or plan is None or not ctx.system.host.memory_total_bytes:
        return None
    strategy, estimate = plan
    ram = ctx.system.host.memory_total_bytes
    return Judged(strategy, estimate, ram, judge(estimate.host_bytes, ram, HEADROOM))


def fastest_fitting(ctx: CheckContext, strategy: Strategy, gpu_bytes: int) -> MemoryEstimate | None:
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
        estimate = estimate_for(ctx, candidate)
        if budget.fits(estimate):
            return estimate
    return None
