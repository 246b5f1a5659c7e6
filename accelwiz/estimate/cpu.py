"""A fine-tune on the CPU, judged on host RAM: every process's tensors live in the machine's memory.

Per process, the tensors are what the GPU path counts (memory.py: weights, gradients, optimizer states,
activations, the loss tail, the step's temporaries, DDP's gradient buckets), at the same phase peak, in the
precision the plan trains in: fp32 unless it asks for bf16, which accelerate runs on the CPU as
`torch.autocast("cpu", torch.bfloat16)` over fp32 weights (the same autocast copies as on a GPU). Two things
differ from a GPU:

* no caching allocator and no CUDA runtime: freed tensors go back to glibc (large blocks are unmapped at once),
  so the tensors' peak is what RSS shows of them, with no reserve beyond it;
* torch's AdamW takes its single-tensor path on CPU tensors (`_default_to_fused_or_foreach` picks foreach only
  for cuda/xpu/mtia), whose `exp_avg_sq.sqrt() / bias_correction2_sqrt` holds two temporaries the size of one
  parameter, the largest one at the peak, instead of foreach's one temporary the size of all of them.

Beside the tensors each process holds Python, torch, accelerate, transformers and the trainer
(`CPU_PROCESS_BASELINE_BYTES`), a distributed rank also gloo's process group and DDP's reducer
(`CPU_DISTRIBUTED_EXTRA_BYTES`), and the machine the `accelerate launch` process that hosts torchrun's agent plus
`accelwiz run`'s front end (`CPU_LAUNCHER_BYTES`). Each is measured on the quickstart's own run
(benchmarks/cpu_host_ram.py: psutil RSS of every process of `accelwiz init --model tiny [--processes 2]
--defaults && accelwiz run --steps 3`; torch 2.13.0+cpu, accelerate 1.16.0, transformers 5.25.0, Python 3.11,
benchmarks/results/cpu_host_ram.json), not guessed:

* one rank's peak RSS 454,369,280 B (`ru_maxrss`, the run report's `peak_memory_bytes`) less the 4,861,696 B of
  tensors estimated for it: 449,507,584 B of baseline;
* with 2 ranks each peaked at 541,306,880 and 542,265,344 B: 87 MB more per rank (the process group);
* `accelerate launch` 252,424,192 B (2 ranks; 249,307,136 for 1) and `accelwiz run` 40,284,160 B.

So the machine holds processes x (tensors + baseline) + the launcher, judged against its RAM with the one verdict
(verdict.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from accelwiz.estimate.cpu_step import cpu_step_temporaries  # noqa: F401 (the step, where states.py reads it)
from accelwiz.estimate.memory import MemoryEstimate, estimate_memory
from accelwiz.estimate.strategy import Strategy

if TYPE_CHECKING:
    from accelwiz.estimate.recommend import Recommendation
    from accelwiz.estimate.workload import Workload

QUICKSTART_RANK_PEAK_RSS = 454_369_280  # tiny, 1 process: the rank's ru_maxrss
QUICKSTART_RANK_TENSORS = 4_730_624  # what this module estimates of tensors for that rank (today)
CPU_PROCESS_BASELINE_BYTES = QUICKSTART_RANK_PEAK_RSS - QUICKSTART_RANK_TENSORS
CPU_DISTRIBUTED_EXTRA_BYTES = (541_306_880 + 542_265_344) // 2 - QUICKSTART_RANK_PEAK_RSS
CPU_LAUNCHER_BYTES = 252_424_192 + 40_284_160  # `accelerate launch` (torchrun's agent) + `accelwiz run`


def cpu_strategy(strategy: Strategy) -> Strategy:
    """The same strategy, its processes on the CPU."""
    return strategy if strategy.device == "cpu" else replace(strategy, device="cpu")


def processes_strategy(processes: int, nodes: int = 1) -> Strategy:
    """A CPU run of `processes` per machine: one process, or DDP over gloo (what accelerate starts on CPUs)."""
    kind = "single" if processes * nodes == 1 else "ddp"
    return Strategy(kind, gpus_per_node=processes, nodes=nodes, device="cpu")


@dataclass(frozen=True)
class CpuMemoryEstimate(MemoryEstimate):
    """A CPU run's estimate: the per-process fields as a GPU's (the tensors, in host RAM), `host_bytes` the
    machine's RAM for all its processes, and what each process holds beside its tensors."""

    processes: int = 1  # per machine
    baseline_bytes: int = 0  # per process: Python, torch, the libraries (and gloo for a distributed rank)
    launcher_bytes: int = 0  # per machine: `accelerate launch` and `accelwiz run`

    @property
    def per_process(self) -> int:
        return self.allocated + self.baseline_bytes


def as_cpu_run(estimate: MemoryEstimate) -> CpuMemoryEstimate:
    """`estimate` (made with a CPU strategy, `cpu_strategy`) as host RAM: no allocator reserve and no CUDA runtime,
    each process's baseline beside its tensors, the launcher beside the processes."""
    strategy = estimate.strategy
    processes = strategy.gpus_per_node
    baseline = CPU_PROCESS_BASELINE_BYTES + (CPU_DISTRIBUTED_EXTRA_BYTES if strategy.world_size > 1 else 0)
    allocated = estimate.allocated
    host = processes * (allocated + baseline) + CPU_LAUNCHER_BYTES
    gpu_words = (f"{strategy.label} over", "allocator reserve", "runtime beside", "loading:", "host:", "offloaded")
    kept = tuple(a for a in estimate.assumptions if not a.startswith(gpu_words))
    assumptions = (
        f"CPU run: {processes} process(es) per machine"
        + (" (DDP over gloo)" if strategy.world_size > 1 else "") + ", every tensor in host RAM",
        *kept,
        f"per process beside its tensors: {baseline / 2**20:.0f} MiB (Python, torch, accelerate, transformers"
        + (", gloo's process group" if strategy.world_size > 1 else "")
        + "), measured on the quickstart's run (estimate/cpu.py)",
        f"per machine: {CPU_LAUNCHER_BYTES / 2**20:.0f} MiB for `accelerate launch` and `accelwiz run`",
        "no caching allocator on the CPU: freed tensors return to glibc, so no reserve is counted",
    )
    fields = {name: getattr(estimate, name) for name in MemoryEstimate.__dataclass_fields__}
    fields.update(overhead=0, reserved=allocated, runtime_parts=(), host_bytes=host, nvme_bytes=0,
                  assumptions=assumptions)
    return CpuMemoryEstimate(**fields, processes=processes, baseline_bytes=baseline,
                             launcher_bytes=CPU_LAUNCHER_BYTES)


def cpu_estimate(workload: Workload, strategy: Strategy) -> CpuMemoryEstimate:
    """Host RAM per machine of `workload` trained on the CPU by `strategy`'s processes (module docstring)."""
    return as_cpu_run(estimate_memory(workload, cpu_strategy(strategy)))


def cpu_advice(estimate: CpuMemoryEstimate, ram: int | None) -> Recommendation | None:
    """What to change where a CPU run does not fit the machine's RAM with the headroom: the first of gradient
    checkpointing, micro-batch 1, one process, LoRA that would (named, never applied)."""
    from accelwiz.estimate.recommend import Recommendation
    from accelwiz.estimate.sizes import gib
    from accelwiz.estimate.verdict import judge

    if not ram:
        return None
    workload, strategy = estimate.workload, estimate.strategy
    where = f"{estimate.processes} CPU process(es) per machine, {gib(estimate.host_bytes)} of {gib(ram)} RAM"
    if judge(estimate.host_bytes, ram) == "fits":
        return Recommendation(estimate, None, (), f"{strategy.label} on the CPU: {where}")
    tries = []
    if not workload.gradient_checkpointing:
        tries.append(("gradient checkpointing", replace(workload, gradient_checkpointing=True), strategy))
    if workload.micro_batch > 1:
        more = workload.gradient_accumulation * workload.micro_batch  # the same global batch
        tries.append(("micro-batch 1 (more accumulation)",
                      replace(workload, micro_batch=1, gradient_accumulation=more), strategy))
    if strategy.world_size > 1:
        tries.append(("one process", workload, processes_strategy(1)))
    if workload.regime == "full":
        tries.append(("LoRA", replace(workload, regime="lora"), strategy))
    for name, changed, ran in tries:
        other = cpu_estimate(changed, ran)
        if judge(other.host_bytes, ram) == "fits":
            return Recommendation(None, None, (), f"nothing as asked fits ({where}); with {name}: "
                                  f"{gib(other.host_bytes)} per machine", suggestions=(name,))
    return Recommendation(None, None, (), f"nothing fits this machine's RAM ({where}), not even with "
                          f"{', '.join(n for n, _, _ in tries) or 'any change tried'}: train on a GPU machine")


def runs_on_cpu(*, use_cpu: bool, distributed_type: str | None, planned_gpus: int | None,
                machine_gpus: int | None, world_size: int) -> bool:
    """Whether a run trains on the CPU: the YAML says so (`use_cpu`, MULTI_CPU), its plan was made for a machine
    without GPUs, or, without a plan, one process on a machine without GPUs (several processes there are a GPU
    plan judged elsewhere: memory_host.planned_elsewhere)."""
    if use_cpu or distributed_type == "MULTI_CPU":
        return True
    if planned_gpus is not None:
        return planned_gpus == 0
    return machine_gpus == 0 and world_size == 1
