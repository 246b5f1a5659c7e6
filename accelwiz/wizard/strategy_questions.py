"""The strategy and offload questions, in the catalog's order, with their choices and defaults: the strategies
init writes, each in the estimator's numbers for the answers so far, the fastest that fits as the default, and the
offloads (and their device) that make it fit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard import costing as memory
from accelwiz.wizard import predicates as p
from accelwiz.wizard.answers import OffloadDevice, StrategyChoice
from accelwiz.wizard.catalog_types import Choice, Question
from accelwiz.wizard.suggest import verify_nvme_path, world_size


def strategy_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    """One GPU: no replication to choose, only offload (ZeRO-2/3); several: every strategy (hybrid across
    machines)."""
    if world_size(answers, system) == 1:
        offered = [StrategyChoice.single, StrategyChoice.zero2, StrategyChoice.zero3]
    else:
        offered = [StrategyChoice.ddp, StrategyChoice.fsdp_full, StrategyChoice.fsdp_grad_op, StrategyChoice.zero1,
                   StrategyChoice.zero2, StrategyChoice.zero3]
        if int(answers.get("num_machines") or 1) > 1:
            offered.insert(3, StrategyChoice.fsdp_hybrid)
    plan = memory.plan_for(answers, system)
    missing_deepspeed = system.package_missing("deepspeed")
    choices = []
    for strategy in offered:
        label = strategy.label
        option = plan.option(strategy) if plan else None
        if option is not None:
            offload = f" with {'NVMe' if option.nvme else 'CPU'} offload" if option.offload_device != "none" else ""
            label += f": {_need_words(option, offload)}"
        if strategy.zero_stage is not None and missing_deepspeed:
            label += " [DeepSpeed is not installed]"
        choices.append(Choice(label, strategy))
    return choices


def _need_words(option: memory.Option, offload: str = "") -> str:
    """The menu cell, in the verdict's own numbers (estimate/verdict.py): '30.8 GiB per GPU, fits', '73.3 GiB per
    GPU (allocator retries), tight', never a need above the GPU called tight."""
    gpu = option.verdict.gpu
    if gpu is None:
        return f"{option.per_gpu_bytes / GIB:.1f} GiB per GPU{offload}, {_verdict_words(option)}"
    retry = " (allocator retries)" if gpu.retries else ""
    return f"{gpu.need / GIB:.1f} GiB per GPU{offload}{retry}, {_verdict_words(option)}"


def _verdict_words(option: memory.Option) -> str:
    """'fits', 'tight', 'does not fit' naming the short resource: 'host RAM short: needs 136.6 GiB per machine'."""
    verdict = option.verdict.verdict or "fits"
    host = option.verdict.host
    if verdict != "fits" and host is not None and host.verdict == verdict and (
            option.verdict.gpu is None or option.verdict.gpu.verdict != verdict):
        return f"{verdict}: host RAM {host.share}"
    return verdict


def default_strategy(answers: Mapping[str, Any], system: MachineProfile) -> StrategyChoice:
    """The estimator's fastest fitting strategy (NVMe last); without an estimate, plain data parallelism."""
    plan = memory.plan_for(answers, system)
    offered = [c.value for c in strategy_choices(answers, system)]
    if plan is not None:
        if str(getattr(answers.get("precision"), "value", answers.get("precision"))).lower() == "fp8":
            # fp8 asked for up front: the fastest fitting strategy that can carry it (not DeepSpeed, see
            # refuse_precision); when none fits, the usual pick and the precision question says why not fp8
            takes_fp8 = next((o for o in plan.fitting(nvme=False) if o.strategy in offered
                              and o.strategy.zero_stage is None), None)
            if takes_fp8 is not None:
                return takes_fp8.strategy
        best = next((o for o in plan.fitting() if o.strategy in offered), None)
        return best.strategy if best is not None else StrategyChoice.zero3
    return StrategyChoice.single if world_size(answers, system) == 1 else StrategyChoice.ddp


def explain_strategy(answers: Mapping[str, Any], system: MachineProfile) -> str:
    plan = memory.plan_for(answers, system)
    if plan is None:
        return "no model named, so no memory estimate: DDP is the fastest when the model fits on one GPU"
    picked = default_strategy(answers, system)
    best = plan.best
    fp8 = str(getattr(answers.get("precision"), "value", answers.get("precision"))).lower() == "fp8"
    if fp8 and best is not None and picked is not best.strategy:  # DeepSpeed cannot carry the fp8 asked for
        option = plan.option(picked)
        assert option is not None
        return (f"{option.label}: {option.per_gpu_bytes / GIB:.1f} of {plan.gpu_memory_bytes / GIB:.1f} GiB per GPU, "
                f"the fastest that takes fp8 ({best.label} is faster, but fp8 is not offered with DeepSpeed ZeRO)")
    return plan.explain()


def _fitting_option(answers: Mapping[str, Any], system: MachineProfile) -> memory.Option | None:
    """The fastest fitting option of the chosen strategy given the offload answers so far (None: no plan)."""
    plan = memory.plan_for(answers, system)
    strategy = answers.get("strategy")
    if plan is None or not isinstance(strategy, StrategyChoice):
        return None
    same = [o for o in plan.options if o.strategy is strategy]
    if "offload_optimizer" in answers:
        same = [o for o in same if o.offload_optimizer == answers["offload_optimizer"]]
    if "offload_params" in answers:
        same = [o for o in same if o.offload_params == answers["offload_params"]]
    fitting = [o for o in same if o.fits]
    if fitting:
        return fitting[0]
    # nothing fits: start from the most frugal setting, offloading all it can
    return min(same, key=lambda o: o.per_gpu_bytes) if same else None


def default_offload_optimizer(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    option = _fitting_option(answers, system)
    return bool(option and option.offload_optimizer)


def default_offload_params(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    option = _fitting_option(answers, system)
    return bool(option and option.offload_params)


def default_offload_device(answers: Mapping[str, Any], system: MachineProfile) -> OffloadDevice:
    option = _fitting_option(answers, system)
    return OffloadDevice.nvme if option is not None and option.nvme else OffloadDevice.cpu


def explain_offload_device(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    """Why NVMe, when it is the default: what CPU offload would need of host RAM."""
    if default_offload_device(answers, system) is not OffloadDevice.nvme:
        return None
    plan = memory.plan_for(answers, system)
    same = [o for o in plan.options if o.offload_device == "cpu" and o.strategy is answers.get("strategy")
            and o.offload_params == bool(answers.get("offload_params"))] if plan else []
    cpu = min(same, key=lambda o: o.host_bytes, default=None)
    if cpu is None:
        return None
    return (f"NVMe: {cpu.label} needs {cpu.host_bytes / GIB:.1f} GiB of host RAM per machine, "
            f"{(plan.host_memory_bytes or 0) / GIB:.1f} GiB here (or choose LoRA)")


def offload_device_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    plan = memory.plan_for(answers, system)
    labels = {OffloadDevice.cpu: "CPU memory (host RAM)", OffloadDevice.nvme: "NVMe drive (ZeRO-Infinity; asks a path)"}
    choices = []
    for device, label in labels.items():
        option = None
        if plan is not None:
            option = next((o for o in plan.options if o.strategy is StrategyChoice.zero3
                           and o.offload_device == device.value
                           and o.offload_params == bool(answers.get("offload_params"))), None)
        if option is not None:
            label += f": {option.verdict.describe()}"
        choices.append(Choice(label, device))
    return choices


# In the catalog's order, after the machine's GPUs and before precision (whose fp8 depends on the strategy).
STRATEGY_QUESTIONS: tuple[Question, ...] = (
    Question(
        "strategy",
        "How should training be distributed?",
        kind="select",
        when=p.has_gpu,
        default=default_strategy,
        choices=strategy_choices,
        explain=explain_strategy,
        help="Pre-selected: the fastest strategy that fits in GPU memory according to the estimate.",
    ),
    Question(
        "offload_optimizer",
        "Offload optimizer state off the GPU (to CPU memory, or NVMe with ZeRO-3)?",
        kind="confirm",
        when=p.uses_deepspeed,
        default=default_offload_optimizer,
        help="Frees GPU memory for large models at the cost of speed (DeepSpeed CPU Adam).",
    ),
    Question(
        "offload_params",
        "Offload parameters off the GPU (to CPU memory, or NVMe with ZeRO-3)?",
        kind="confirm",
        when=p.can_offload_params,
        default=default_offload_params,
        help="Only sharded parameters can leave the GPU (ZeRO-3, FSDP); slow, for models that do not fit.",
    ),
    Question(
        "offload_device",
        "Offload to which device?",
        kind="select",
        when=p.offloads_with_zero3,
        default=default_offload_device,
        choices=offload_device_choices,
        explain=explain_offload_device,
        help="CPU memory is faster; an NVMe drive holds what host RAM cannot (ZeRO-Infinity).",
    ),
    Question(
        "nvme_path",
        "Directory on a local NVMe drive for the offloaded states?",
        kind="path",
        when=p.offloads_to_nvme,
        default=None,
        verify=verify_nvme_path,
        help="An absolute directory on every machine; DeepSpeed swaps tensors there (needs libaio).",
    ),
)
