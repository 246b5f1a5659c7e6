"""The memory plan behind the wizard's defaults: the estimator's options for the answers so far, and the
fallbacks that fit when the chosen fine-tuning does not.

One-way: suggest.py (defaults, choices) and generate.py import this module; it imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard.answers import Precision, Regime, StrategyChoice

REGIME_NAME = {Regime.full: "full fine-tuning", Regime.lora: "LoRA", Regime.qlora: "QLoRA"}
# Shorter sequences the fallback tries, longest first (halving the default 2048 down to 512).
SHORTER_SEQUENCES = (1024, 512)


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
        """What the GPU verdict judged (estimate/verdict.py gpu_need): below `per_gpu_bytes` where the
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
            short = _short_of(first)
            text += f"; {first.label} would need {short}"
        return text


def _short_of(option: Option) -> str:
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
    given = {"micro_batch": answers.get("micro_batch"), "seq_len": post.sequence if post else answers.get("seq_len"),
             "method": _value(answers.get("regime")), "lora_rank": answers.get("lora_rank"),
             "precision": "fp32" if precision is Precision.no else precision.value,
             "gradient_checkpointing": recommended_checkpointing(answers, system) if checkpointing is None
             else bool(checkpointing)}
    resolved = resolve_workload(answers={k: int(v) if k in _COUNTS and v else v for k, v in given.items()},
                                max_positions=spec.max_position_embeddings)
    return to_workload(resolved, spec)


_COUNTS = ("micro_batch", "seq_len", "lora_rank")


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
    advice = recommend(workload, gpus_per_node=gpus, nodes=nodes, gpu_memory_bytes=system.min_gpu_memory_bytes or 0,
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
PLAN_INPUTS = ("model", "regime", "lora_rank", "seq_len", "micro_batch", "gradient_checkpointing", "gpus",
               "num_machines", "precision", "kind", "max_prompt_length", "max_completion_length", "generation",
               "vllm_anyway", "beta")
# GRPO generates micro-batch x accumulation completions per process at once (steps_per_generation)
GRPO_INPUTS = ("gradient_accumulation",)


def plan_for(answers: Mapping[str, Any], system: MachineProfile) -> Plan | None:
    """The costed options for a named model on this machine, or None without a model or GPUs."""
    if not answers.get("model") or not system.gpus:
        return None
    keys = PLAN_INPUTS + (GRPO_INPUTS if _value(answers.get("kind")) == "grpo" else ())
    inputs = tuple((key, _value(answers.get(key))) for key in keys)
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

    gpu_memory = system.min_gpu_memory_bytes or 0
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


def default_regime(answers: Mapping[str, Any], system: MachineProfile) -> Regime:
    """The fastest fine-tuning that fits without NVMe offload (which needs a path): full, else LoRA, else QLoRA;
    full when nothing fits at all (the fallbacks then say what would)."""
    from accelwiz.wizard.post_settings import regimes_for

    for regime in regimes_for(answers):
        plan = plan_for({**answers, "regime": regime}, system)
        if plan is None or plan.best_option(nvme=False) is not None:
            return regime
    return Regime.full


def explain_regime(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    """Why the default is not full fine-tuning, in one line."""
    regime = default_regime(answers, system)
    if regime is Regime.full:
        return None
    full = plan_for({**answers, "regime": Regime.full}, system)
    picked = plan_for({**answers, "regime": regime}, system)
    assert full is not None and picked is not None
    frugal = min((o for o in full.options if not o.nvme), key=lambda o: (o.per_gpu_bytes, o.host_bytes))
    best = picked.best_option(nvme=False)
    assert best is not None
    nvme = next((o for o in full.options if o.nvme and o.fits), None)
    why = f"full fine-tuning does not fit: even {frugal.label} needs {_short_of(frugal)}"
    if nvme is not None:
        why += " (NVMe offload would: choose full, then ZeRO-3 NVMe and give a path)"
    return f"default {REGIME_NAME[regime]} ({best.label}): {why}"


@dataclass(frozen=True)
class Fallback:
    """A change of answers that makes the plan fit, and the one line that says why it was chosen."""

    changes: dict[str, Any]
    option: Option
    reason: str
    asks: tuple[str, ...] = field(default=())  # questions the change brings that have no default (nvme_path)

    @property
    def title(self) -> str:
        what = ", ".join(f"{k}: {_value(v) if not isinstance(v, bool) else str(v).lower()}"
                         for k, v in self.changes.items())
        return f"{what} ({self.option.label}, {self.option.per_gpu_bytes / GIB:.1f} GiB per GPU)"


def fallbacks(answers: Mapping[str, Any], system: MachineProfile, *, fixed: frozenset[str] = frozenset(),
              nvme: bool = True) -> list[Fallback]:
    """What fits, in order of speed: the chosen fine-tuning with CPU offload, then with NVMe offload, LoRA,
    QLoRA, a shorter sequence, more GPUs of this machine. `fixed` are answers the user gave explicitly (never
    changed); `nvme` False leaves NVMe out (no path can be asked)."""
    found: list[Fallback] = []
    plan = plan_for(answers, system)
    if plan is None:
        return found
    strategy_free = not fixed & {"strategy", "offload_optimizer", "offload_params", "offload_device"}
    current = plan.chosen(answers)
    shortage = f"{current.label} needs {_short_of(current)}" if current is not None and not current.fits else \
        "the chosen strategy was not costed"
    if strategy_free:
        cpu = plan.best_option(nvme=False)
        if cpu is not None:
            found.append(Fallback(cpu.answers(), cpu, f"{cpu.label} fits where {shortage}"))
        disk = next((o for o in plan.fitting() if o.nvme), None)
        if nvme and disk is not None and cpu is None:
            cpu_offload = min((o for o in plan.options if o.offload_device == "cpu"),
                              key=lambda o: (o.per_gpu_bytes, o.host_bytes), default=None)
            why = f"CPU offload needs {_short_of(cpu_offload)}" if cpu_offload else shortage
            found.append(Fallback(disk.answers(), disk, f"{disk.label} fits where {why}",
                                  asks=() if answers.get("nvme_path") else ("nvme_path",)))
    regime = Regime(_value(answers.get("regime")) or "full")

    def fit(changes: dict[str, Any]) -> tuple[dict[str, Any], Option] | None:
        """The option that fits with `changes`: the fastest one, or the fixed strategy's own."""
        changed = plan_for({**answers, **changes}, system)
        if changed is None:
            return None
        if strategy_free:
            best = changed.best_option(nvme=False)
            return ({**changes, **best.answers()}, best) if best is not None else None
        same = changed.chosen(answers)
        return (changes, same) if same is not None and same.fits else None

    from accelwiz.wizard.post_settings import regimes_for, training_kind

    offered = regimes_for(answers)
    if "regime" not in fixed:
        for lighter in (Regime.lora, Regime.qlora):
            if list(Regime).index(lighter) <= list(Regime).index(regime) or lighter not in offered:
                continue
            found_fit = fit({"regime": lighter})
            if found_fit is not None:
                changes, option = found_fit
                found.append(Fallback(changes, option, f"{REGIME_NAME[lighter]} fits ({option.label}) where "
                                                       f"{REGIME_NAME[regime]} does not: {shortage}"))
                break
    lightest = offered[-1] if "regime" not in fixed else regime
    if training_kind(answers).post and "max_completion_length" not in fixed:
        # DPO/GRPO: the sequence is prompt + completion; the completion is what can be shortened
        completion = int(answers.get("max_completion_length") or 512)
        for shorter in (completion // 2, completion // 4):
            found_fit = fit({"max_completion_length": shorter, **({"regime": lightest} if lightest is not regime
                                                                   else {})}) if shorter >= 16 else None
            if found_fit is not None:
                changes, option = found_fit
                found.append(Fallback(changes, option, f"completion {shorter} fits ({option.label}) where "
                                                       f"{completion} does not: {shortage}"))
                break
    elif "seq_len" not in fixed:
        for seq in SHORTER_SEQUENCES:
            if seq >= int(answers.get("seq_len") or 2048):
                continue
            found_fit = fit({"seq_len": seq, **({"regime": lightest} if lightest is not regime else {})})
            if found_fit is not None:
                changes, option = found_fit
                found.append(Fallback(changes, option, f"sequence {seq} fits ({option.label}) where "
                                                       f"{answers.get('seq_len') or 2048} does not: {shortage}"))
                break
    gpus = int(answers.get("gpus") or system.gpu_count)
    if "gpus" not in fixed and gpus < system.gpu_count:
        found_fit = fit({"gpus": system.gpu_count})
        if found_fit is not None:
            changes, option = found_fit
            found.append(Fallback(changes, option, f"{system.gpu_count} GPUs fit ({option.label}) where {gpus} "
                                                   "do not"))
    return found


def what_would_fit(answers: Mapping[str, Any], system: MachineProfile, *,
                   fixed: frozenset[str] = frozenset()) -> str:
    """For 'nothing fits': the fewest machines of this kind with which QLoRA (or the regime given) fits with the
    fastest strategy, else the GPU memory one GPU would need."""
    from accelwiz.wizard.post_settings import regimes_for

    regime = Regime(_value(answers.get("regime")) or "full")
    lightest = {**answers, "regime": regime if "regime" in fixed else regimes_for(answers)[-1]}
    gpus = int(answers.get("gpus") or system.gpu_count)
    current = int(answers.get("num_machines") or 1)
    for machines in (current, *(n for n in (2, 4, 8, 16, 32, 64) if n > current)):
        plan = plan_for({**lightest, "num_machines": machines, "gpus": gpus}, system)
        best = plan.best_option(nvme=False) if plan else None
        if best is not None:
            where = "these machines" if machines == current else f"{machines} machines of {gpus} GPU(s)"
            return (f"{where} with {REGIME_NAME[Regime(_value(lightest['regime']))]} and {best.label} "
                    f"({best.per_gpu_bytes / GIB:.1f} GiB per GPU)")
    plan = plan_for(lightest, system)
    on_gpu = [o for o in plan.options if o.offload_device == "none"] if plan else []
    if not on_gpu:
        return "a larger machine"
    least = min(on_gpu, key=lambda o: o.per_gpu_bytes)
    return (f"GPUs with {least.per_gpu_bytes / GIB / 0.9:.0f} GiB or more ({_value(lightest['regime'])}, "
            f"{least.label} without offload)")
