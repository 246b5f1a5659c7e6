"""AW502, AW506: will the host hold what offload puts there? Run when `--model` is given (the workload)."""

from __future__ import annotations

import shlex

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.memory_view import anchor, gib, judged_host
from accelwiz.rules.rule import Needs, rule
from accelwiz.vocab import HEADROOM

if TYPE_CHECKING:
    from accelwiz.estimate.cpu import CpuMemoryEstimate


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

    The message names what fills the host, and the hint is the one true for it: offload less for offloaded
    states; for the weights each process loads on the CPU before moving them to its GPU, fewer processes per
    node, low_cpu_mem_usage / meta-device loading, or a host with more RAM. A plan made for a GPU machine and judged on one without GPUs says so.

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
    judged = judged_host(ctx)
    if judged is None or judged.verdict != "does not fit":  # tight is AW506's
        return
    strategy, estimate, ram, _ = judged
    role, path = anchor(ctx, strategy)
    if _cpu_run(estimate):
        yield Finding(role, path, f"estimated {cpu_need(estimate)} exceeds the machine's {gib(ram)}", CPU_FIX)
        return
    need, fix, elsewhere = _gpu_run_need(ctx, strategy, estimate, "node")
    tail = elsewhere[0] if elsewhere else ""
    yield Finding(role, path, f"estimated {need} exceeds the node's {gib(ram)}{tail}", _with_elsewhere(fix, elsewhere))


def _gpu_run_need(ctx: CheckContext, strategy: Any, estimate: Any, per: str
                  ) -> tuple[str, str, tuple[str, str] | None]:
    """A GPU run's host need ('40.2 GiB of host RAM per node for offloaded states (ZeRO-3 ..., llama-...)'),
    the fix true for what fills it, and the planned machine when this one is not it (`planned_elsewhere`)."""
    what, fix = host_filled_by(estimate, strategy)
    need = (f"{gib(estimate.host_bytes)} of host RAM per {per} for {what} ({strategy.label}, "
            f"{ctx.workload.model.name})")
    return need, fix, planned_elsewhere(ctx, strategy)


def _with_elsewhere(fix: str, elsewhere: tuple[str, str] | None) -> str:
    """Offloaded states that fit the planned machine: only "run it there" is true. The load: one copy less, a
    bigger host, or the planned machine are all true here."""
    if elsewhere is None:
        return fix
    if fix == OFFLOAD_FIX:
        return elsewhere[1]
    return f"{fix}; or {elsewhere[1][0].lower()}{elsewhere[1][1:]}"


OFFLOAD_FIX = "Offload less (optimizer only, or none), use NVMe offload, or add nodes"
LOAD_FIX = ("Load fewer copies: fewer processes per node, low_cpu_mem_usage / meta-device loading (FSDP's "
            "cpu_ram_efficient_loading, ZeRO-3's zero.Init), or a host with more RAM")


def host_filled_by(estimate: Any, strategy: Any) -> tuple[str, str]:
    """What fills a GPU run's host RAM, in the estimator's words (estimate/host.py: the offloaded states, or the
    weights each process loads on the CPU before moving them to its GPU), and the fix that is true for it."""
    if "cpu" in (strategy.offload_optimizer, strategy.offload_param):
        return "offloaded states", OFFLOAD_FIX
    from accelwiz.estimate.host import HOST_PROCESS_BYTES  # lazily: check's start-up imports no estimator

    # host.py's note (loading.py's 'loading: ... on the GPU' is the GPU side of the same phase)
    how = next((a.removeprefix("loading: ") for a in estimate.assumptions
                if a.startswith("loading:") and "on the GPU" not in a), "the model as loaded")
    processes = strategy.gpus_per_node
    runtime = processes * HOST_PROCESS_BYTES  # without offload the node holds the load beside each runtime
    return (f"the weights as loaded on the CPU before they move to the GPU ({gib(estimate.host_bytes - runtime)}: "
            f"{how}; + {processes} process(es) x {gib(HOST_PROCESS_BYTES)} for Python, torch and CUDA)", LOAD_FIX)


CPU_FIX = ("Use fewer processes, a smaller micro-batch, gradient checkpointing or LoRA (`accelwiz estimate --config "
           "FILE` names the first that fits), or train on a GPU machine")


def _cpu_run(estimate: Any) -> bool:
    from accelwiz.estimate.cpu import CpuMemoryEstimate  # lazily: check's start-up imports no estimator

    return isinstance(estimate, CpuMemoryEstimate)


def cpu_need(estimate: CpuMemoryEstimate) -> str:
    """'2.2 GiB of host RAM per machine for CPU training (2 process(es) x 1.0 GiB: 0.5 GiB of tensors + ...)'."""
    return (f"{gib(estimate.host_bytes)} of host RAM per machine for CPU training ({estimate.strategy.label}, "
            f"{estimate.workload.model.name}: {estimate.processes} process(es) x {gib(estimate.per_process)}, "
            f"{gib(estimate.allocated)} of tensors and {gib(estimate.baseline_bytes)} of Python, torch and the "
            f"libraries each, + {gib(estimate.launcher_bytes)} for the launcher)")


def planned_elsewhere(ctx: CheckContext, strategy: Any) -> tuple[str, str] | None:
    """A GPU strategy judged on a machine without GPUs (`check --system local`, `run` on a CPU machine): the
    plan was made for another machine, whose RAM is what matters; (message tail, fix), never "offload less"."""
    if ctx.system is None or ctx.system.gpus:
        return None  # judged where it runs (a single process without a plan is a CPU run: estimate/cpu.py)
    planned = ctx.plan.system if ctx.plan is not None else None
    judged_file = shlex.quote(str(ctx.accelerate.path)) + " " if ctx.accelerate is not None else ""
    if planned is None or not planned.gpus_per_machine:
        where = f"a machine with {strategy.world_size} GPU(s)"
        fix = f"`accelwiz check {judged_file}--system PRESET|profile.json`"
    else:
        where = f"{planned.name} ({planned.machines} x {planned.gpus_per_machine} GPU(s))"
        fix = f"`accelwiz check {judged_file}--system {shlex.quote(planned.name)}`"
    return (f"; the plan is for {where} and this machine has no GPU: it was planned for another machine",
            f"Judge and run it on the machine it was planned for ({fix}), or plan for this one with "
            f"`accelwiz init --system local`")


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
    judged = judged_host(ctx)
    if judged is None or judged.verdict != "tight":
        return
    strategy, estimate, ram, _ = judged
    role, path = anchor(ctx, strategy)
    if _cpu_run(estimate):
        yield Finding(role, path, f"estimated {cpu_need(estimate)} is tight: above {HEADROOM:.0%} of the machine's "
                                  f"{gib(ram)}", CPU_FIX)
        return
    need, fix, elsewhere = _gpu_run_need(ctx, strategy, estimate, "machine")
    tail = elsewhere[0] if elsewhere else ""
    yield Finding(role, path, f"estimated {need} is tight: above {HEADROOM:.0%} of the machine's {gib(ram)}{tail}",
                  # offloaded states: the rule's own fix (offload less, to keep 10% free); the load: its own
                  _with_elsewhere(fix, elsewhere) if elsewhere or fix != OFFLOAD_FIX else None)
