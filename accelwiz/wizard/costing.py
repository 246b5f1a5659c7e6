"""The memory plan behind the wizard's defaults: the estimator's options for the answers so far, costed once per
set of answers, and the fine-tuning that fits by default.

One-way: suggest.py (defaults, choices), fallbacks.py and generate.py import this module; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB, PLAN_PRECISION_OF_MIXED
from accelwiz.wizard.answers import Precision, Regime, StrategyChoice

REGIME_NAME = {Regime.full: "full fine-tuning", Regime.lora: "LoRA", Regime.qlora: "QLoRA"}


@dataclass(frozen=True)
class Option:
    """One strategy the estimator costed: memory per GPU and per host, and the one verdict on both."""

    strategy: StrategyChoice
    offload_optimizer: bool
    offload_params: bool
    offload_device: str  # "none", "cpu" or "nvme"
    per_gpu_bytes: int
    host_bytes: int
    verdict: Any  # accelwiz.estimate.verdict.MemoryVerdict
    label: str
    phases: tuple[tuple[str, int], ...] = ()  # bytes per GPU at each phase (DPO/GRPO: logprob, generation too)

    @property
    def peak_phase(self) -> str | None:
        return max(self.phases, key=lambda item: item[1])[0] if self.phases else None

    @property
    def fits(self) -> bool:
        return self.verdict.fits

    @property
    def gpu_need(self) -> int:
        """What the GPU verdict judged (estimate/gpu_fit.py): below `per_gpu_bytes` where the
        allocator would release its cache and retry."""
        return self.verdict.gpu.need if self.verdict.gpu is not None else self.per_gpu_bytes

    @property
    def nvme(self) -> bool:
        return self.offload_device == "nvme"

    def answers(self) -> dict[str, Any]:
        """The strategy answers that select this option."""
        changes: dict[str, Any] = {"strategy": self.strategy}
        if self.strategy.zero_stage is not None:
            changes["offload_optimizer"] = self.offload_optimizer
        if self.strategy in (StrategyChoice.zero3, StrategyChoice.fsdp_full):
            changes["offload_params"] = self.offload_params
        if self.strategy is StrategyChoice.zero3 and (self.offload_optimizer or self.offload_params):
            changes["offload_device"] = "nvme" if self.nvme else "cpu"
        return changes

    def describe(self) -> str:
        """'ZeRO-3 + CPU offload (optimizer): fits: GPU memory 20.1 GiB of 24.0 GiB per GPU (84%); host RAM ...'."""
        return f"{self.label}: {self.verdict.describe()}"


@dataclass(frozen=True)
class Plan:
    options: tuple[Option, ...]
    gpu_memory_bytes: int
    host_memory_bytes: int | None

    def fitting(self, *, nvme: bool = True) -> list[Option]:
        return [o for o in self.options if o.fits and (nvme or not o.nvme)]

    def best_option(self, *, nvme: bool = True) -> Option | None:
        """The fastest option that fits (options are in the estimator's speed order)."""
        return next(iter(self.fitting(nvme=nvme)), None)

    @property
    def best(self) -> Option | None:
        return self.best_option(nvme=True)

    def option(self, strategy: StrategyChoice) -> Option | None:
        """The fastest costed option of a strategy that fits (no offload before offload), else its most frugal
        (the last: offloading the most)."""
        same = [o for o in self.options if o.strategy is strategy]
        return next((o for o in same if o.fits), same[-1] if same else None)

    def chosen(self, answers: Mapping[str, Any]) -> Option | None:
        """The option the answers select (strategy, offloads, device); None when it was not costed."""
        strategy = answers.get("strategy")
        same = [o for o in self.options if o.strategy is strategy]
        offloads = (bool(answers.get("offload_optimizer")), bool(answers.get("offload_params")))
        if strategy is StrategyChoice.fsdp_full:  # FSDP's CPU offload moves both; init asks only offload_params
            offloads = (offloads[1], offloads[1])
        device = _value(answers.get("offload_device")) or "cpu"
        exact = [o for o in same if (o.offload_optimizer, o.offload_params) == offloads
                 and (o.offload_device == device or o.offload_device == "none")]
        return (exact or [None])[0]

    def explain(self, *, nvme: bool = True) -> str:
        """One line: the pick and why the faster ones were passed over (GPU memory and host RAM apart)."""
        best = self.best_option(nvme=nvme)
        if best is None:
            frugal = min(self.options, key=lambda o: o.per_gpu_bytes)
            return f"nothing fits: even {frugal.describe()}"
        text = f"{best.label}: {best.per_gpu_bytes / GIB:.1f} of {self.gpu_memory_bytes / GIB:.1f} GiB per GPU"
        faster = self.options[: self.options.index(best)]
        if faster:
            first = faster[0]
            short = short_of(first)
            text += f"; {first.label} would need {short}"
        return text


def short_of(option: Option) -> str:
    """What a non-fitting option lacks, naming GPU memory or host RAM (never both in one phrase)."""
    verdict = option.verdict
    if verdict.gpu is not None and verdict.gpu.verdict != "fits":
        retry = ", allocator retries" if verdict.gpu.retries else ""
        return f"{option.gpu_need / GIB:.1f} GiB of GPU memory per GPU ({verdict.gpu.verdict}{retry})"
    return f"{option.host_bytes / GIB:.1f} GiB of host RAM per machine"


def _value(value: Any) -> Any:
    return getattr(value, "value", value)


def default_precision(system: MachineProfile) -> Precision:
    """bf16 where the GPU computes it natively (Ampere+), fp16 on Volta/Turing, full precision on the CPU."""
    if not system.gpus:
        return Precision.no
    return Precision.bf16 if system.native_bf16 else Precision.fp16


def workload_for(answers: Mapping[str, Any], system: MachineProfile) -> Any:
    """The estimator's Workload for the answers so far, through the one resolution (accelwiz.resolution): unasked
    questions at its defaults, checkpointing as the recommendation has it (`recommended_checkpointing`, as
    `estimate`), and the hardware's precision."""
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.workload import resolve_workload
    from accelwiz.wizard.post_settings import post_settings

    spec = resolve_model(answers["model"])
    post = post_settings(answers, spec.max_position_embeddings)
    precision = Precision(_value(answers.get("precision") or default_precision(system)))
    checkpointing = answers.get("gradient_checkpointing")
    # DPO and GRPO: one sequence is prompt + completion (estimate_posttraining sizes its step the same way)
    given = {"micro_batch": answers.get("micro_batch"), "gradient_accumulation": answers.get("gradient_accumulation"),
             "seq_len": post.sequence if post else answers.get("seq_len"),
             "method": _value(answers.get("regime")), "lora_rank": answers.get("lora_rank"),
             "precision": PLAN_PRECISION_OF_MIXED[precision.value],
             "gradient_checkpointing": recommended_checkpointing(answers, system) if checkpointing is None
             else bool(checkpointing)}
    resolved = resolve_workload(answers={k: int(v) if k in _COUNTS and v else v for k, v in given.items()},
                                max_positions=spec.max_position_embeddings)
    return to_workload(resolved, spec)


_COUNTS = ("micro_batch", "gradient_accumulation", "seq_len", "lora_rank")


def recommended_checkpointing(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """Checkpointing's default, `estimate`'s: off unless the one recommendation (estimate/recommend.py, over the
    strategies init writes) needs it, which it tries before sharding and offload. On where nothing fits (the
    fallbacks start from the frugal side) and for DPO/GRPO (TRL's default; their phases are costed apart)."""
    from accelwiz.wizard.post_settings import training_kind

    if not answers.get("model") or not system.gpus:
        return False
    if training_kind(answers).post:
        return True
    from accelwiz.estimate.recommend import recommend

    try:
        workload = workload_for({**answers, "gradient_checkpointing": False}, system)
    except (ValueError, TypeError):
        return True  # an answer given ahead of its question: verified there (plan_for)
    gpus, nodes = int(answers.get("gpus") or system.gpu_count), int(answers.get("num_machines") or system.num_machines)
    advice = recommend(workload, gpus_per_node=gpus, nodes=nodes, gpu_memory_bytes=system.gpu_capacity_bytes or 0,
                       host_memory_bytes=system.host.memory_total_bytes or None, gpu=system.gpus[0].name,
                       fixed=frozenset({"micro_batch"}), strategies=offered_strategies(gpus, nodes))
    return advice.best is None or advice.best.workload.gradient_checkpointing


def offered_strategies(gpus: int, nodes: int) -> list[Any]:
    """The estimator's candidates that init writes, fastest first (one GPU: single, ZeRO-2/3 for offload)."""
    from accelwiz.estimate.strategy import candidate_strategies

    return [s for s in candidate_strategies(gpus, nodes)
            if _offered(s) and (gpus * nodes > 1 or s.kind in ("single", "zero2", "zero3"))]


# The answers the estimate depends on; the plan is cached on them, so asking for defaults, choices and the
# explanation of one question costs one estimate.
# The accumulation: its gradients stay live across micro-batches (estimate/accumulation.py), and GRPO generates
# micro-batch x accumulation completions per process at once (steps_per_generation)
PLAN_INPUTS = ("model", "regime", "lora_rank", "seq_len", "micro_batch", "gradient_accumulation",
               "gradient_checkpointing", "gpus", "num_machines", "precision", "kind", "max_prompt_length",
               "max_completion_length", "generation", "vllm_anyway", "beta")


def plan_for(answers: Mapping[str, Any], system: MachineProfile) -> Plan | None:
    """The costed options for a named model on this machine, or None without a model or GPUs."""
    if not answers.get("model") or not system.gpus:
        return None
    inputs = tuple((key, _value(answers.get(key))) for key in PLAN_INPUTS)
    cached = _PLANS.get((id(system), inputs))
    if cached is None or cached[0] is not system:
        try:
            estimated = _estimate_plan(dict(answers), system)
        except (ValueError, TypeError):
            # an answer given ahead of its question (--answers `precision: bf`) is verified when its question
            # comes; until then a default that needs the estimate is computed without one
            return None
        cached = _PLANS[(id(system), inputs)] = (system, estimated)
    return cached[1]


# MachineProfile holds lists, so it is not hashable: cache by identity and keep the profile alive beside it.
_PLANS: dict[tuple[int, tuple[tuple[str, Any], ...]], tuple[MachineProfile, Plan]] = {}


def _estimate_plan(answers: dict[str, Any], system: MachineProfile) -> Plan:
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.recommend import Budget
    from accelwiz.wizard.post_settings import post_settings

    gpu_memory = system.gpu_capacity_bytes or 0
    host_memory = system.host.memory_total_bytes or None
    budget = Budget(gpu_memory, host_memory)
    workload = workload_for(answers, system)
    gpus = int(answers.get("gpus") or system.gpu_count)
    nodes = int(answers.get("num_machines") or system.num_machines)
    post = post_settings(answers, workload.model.max_position_embeddings)
    options = []
    for strategy in offered_strategies(gpus, nodes):
        gpu = system.gpus[0].name  # the GPU's runtime, as estimate counts it
        estimate = estimate_memory(workload, strategy, gpu) if post is None else _post_estimate(
            workload, strategy, post, gpu_memory, gpu)
        options.append(_option(estimate, budget.verdict(estimate)))
    return Plan(options=tuple(options), gpu_memory_bytes=gpu_memory, host_memory_bytes=host_memory)


def _post_estimate(workload: Any, strategy: Any, post: Any, gpu_memory: int, gpu: str) -> Any:
    """DPO/GRPO: every phase (the TRL step with the reference model, the log-prob pass, generation) as one
    MemoryEstimate, so the same verdict judges it (accelwiz.estimate.posttraining, as `estimate --kind`)."""
    from accelwiz.estimate.posttraining import estimate_posttraining

    return estimate_posttraining(workload, strategy, post, gpu_memory or None, gpu_name=gpu).combined


def _offered(strategy: Any) -> bool:
    """The wizard writes DDP, FSDP2 full shard and shard-grad-op (and FSDP1 hybrid across machines), ZeRO 1-3
    with CPU offload, and ZeRO-3 with NVMe offload: every strategy AW503 can recommend. FSDP with CPU offload is
    written only as full shard with parameter+optimizer offload."""
    return not (strategy.kind == "fsdp_hybrid" and strategy.offload_param != "none")


def _option(estimate: Any, verdict: Any) -> Option:
    strategy = estimate.strategy
    devices = {strategy.offload_optimizer, strategy.offload_param} - {"none"}
    return Option(
        strategy=StrategyChoice(strategy.kind),  # one vocabulary: the estimator's kind is the answer
        offload_optimizer=strategy.offload_optimizer != "none",
        offload_params=strategy.offload_param != "none",
        offload_device=devices.pop() if devices else "none",
        per_gpu_bytes=int(estimate.per_gpu_total),
        host_bytes=int(estimate.host_bytes),
        verdict=verdict,
        label=strategy.label,
        phases=tuple((name, int(value)) for name, value in estimate.phases),
    )
