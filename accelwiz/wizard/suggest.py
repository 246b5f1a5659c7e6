"""Computed defaults, choices, explanations and answer checks: what the catalog asks of the machine and the
answers so far. Imports plan.py (the memory plan), never the other way round."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.probe.model import MachineProfile
from accelwiz.vocab import GIB
from accelwiz.wizard import costing as memory
from accelwiz.wizard.answers import Launcher, OffloadDevice, Owner, Precision, StrategyChoice
from accelwiz.wizard.catalog_types import Choice
from accelwiz.wizard.predicates import uses_deepspeed


def world_size(answers: Mapping[str, Any], system: MachineProfile) -> int:
    gpus = answers.get("gpus", system.gpu_count)
    per_machine = int(gpus or 0) or int(answers.get("processes") or 1)  # CPU processes where there is no GPU
    return per_machine * int(answers.get("num_machines") or 1)


def default_machines(answers: Mapping[str, Any], system: MachineProfile) -> int:
    return system.num_machines


# ---- answer checks: each runs where its answer is given, with the answers so far ----------------------------


def verify_system(spec: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """A machine spec that names no preset, NxGPU spec or file fails at the question, with a did-you-mean."""
    from accelwiz.wizard.flow import load_machine

    load_machine(spec.strip() or "local")


def verify_model(name: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """An unknown model name fails at the question, with the estimator's suggestions, not at the end."""
    if name:
        from accelwiz.modelspec.lookup import resolve_model

        resolve_model(name)


def _in_range(key: str, value: int, low: int, high: int | None = None, hint: str = "") -> None:
    if value < low or (high is not None and value > high):
        bounds = f"{low} to {high}" if high is not None else f"{low} or more"
        raise UsageError(f"{key} {value} is out of range: {bounds}", hint=hint or f"give {bounds}")


def verify_positive(key: str):  # noqa: ANN201 - a verifier factory
    def verify(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
        _in_range(key, value, 1)

    return verify


def verify_gpus(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    _in_range("gpus", value, 1, system.gpu_count, f"this machine has {system.gpu_count} GPU(s) per machine")


def verify_machines(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    _in_range("num_machines", value, 1, 1024)


def verify_processes(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    _in_range("processes", value, 1, 1024, "CPU processes per machine: 1 to 1024 (usually at most its cores)")


def default_seq_len(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """2048 tokens, or the model's positions when it has fewer (GPT-2: 1024)."""
    from accelwiz.resolution.workload import DEFAULT_SEQ_LEN

    positions = _positions(answers)
    return min(DEFAULT_SEQ_LEN, positions) if positions else DEFAULT_SEQ_LEN


def verify_seq_len(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Longer than the model's positions: transformers indexes past its position table (or the model sees
    positions it never learned). Refused at the question."""
    from accelwiz.resolution.workload import beyond_positions

    _in_range("seq_len", value, 1)
    positions = _positions(answers)
    problem = beyond_positions(value, positions, str(answers.get("model")))
    if problem is not None:
        raise UsageError(problem, hint=f"give {positions} or less")


def _positions(answers: Mapping[str, Any]) -> int | None:
    if not answers.get("model"):
        return None
    from accelwiz.errors import AccelwizError
    from accelwiz.modelspec.lookup import resolve_model

    try:
        return resolve_model(str(answers["model"])).max_position_embeddings or None
    except AccelwizError:
        return None


def verify_clipping(value: float, answers: Mapping[str, Any], system: MachineProfile) -> None:
    import math

    if not math.isfinite(value) or value < 0:
        raise UsageError(f"gradient_clipping {value} must be a finite number >= 0", hint="0 turns clipping off")


def verify_global_batch(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """global batch = micro-batch x accumulation x processes: a multiple of one step's samples."""
    micro = int(answers.get("micro_batch") or 1)
    step = micro * world_size(answers, system)
    if value < 1 or value % step:
        below, above = value // step, value // step + 1
        nearest = [f"{n * step} (accumulation {n})" for n in (below, above) if n >= 1]
        raise UsageError(
            f"target_global_batch {value} is not a multiple of {step} = {micro} (micro-batch) x "
            f"{step // micro} (processes)",
            hint=f"choose {' or '.join(nearest)}",
        )


def verify_machine_rank(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    machines = int(answers.get("num_machines") or 1)
    _in_range("machine_rank", value, 0, machines - 1, f"0 (main) to {machines - 1}")


def verify_port(value: int, answers: Mapping[str, Any], system: MachineProfile) -> None:
    _in_range("main_process_port", value, 1, 65535)


def verify_address(value: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    if not value or any(c.isspace() for c in value):
        raise UsageError(f"main_process_ip {value!r} is not an address", hint="an IP address or host name")


def verify_nvme_path(value: str, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """An absolute directory; when planning for this machine, one on a local NVMe drive."""
    if not value or not value.startswith("/"):
        raise UsageError(f"nvme_path {value!r} must be an absolute directory", hint="e.g. /local_nvme")
    if system.source != "probe":
        return  # another machine: its disks cannot be seen from here
    drive = nvme_drive_of(Path(value))
    if drive is None:
        raise UsageError(f"nvme_path {value} is not on a local NVMe drive",
                         hint="give a directory on an NVMe drive (`lsblk -d -o NAME,TRAN` lists them)")


def nvme_drive_of(path: Path) -> str | None:
    """The NVMe block device the existing part of `path` lives on (Linux sysfs), or None."""
    import os

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        device = os.stat(existing).st_dev
    except OSError:
        return None
    link = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    try:
        resolved = str(link.resolve())
    except OSError:
        return None
    return next((part for part in reversed(resolved.split("/")) if part.startswith("nvme")), None)


# ---- choices and defaults ------------------------------------------------------------------------------------


def default_checkpointing(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return memory.recommended_checkpointing(answers, system)


def owner_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("Accelerate (accelwiz run, or your own loop): the files fix batch and precision", Owner.accelerate),
        Choice("HF Trainer or TRL: TrainingArguments own batch, precision and clipping", Owner.trainer),
    ]


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


def default_precision(answers: Mapping[str, Any], system: MachineProfile) -> Precision:
    return memory.default_precision(system)


def precision_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    bf16 = "bf16" if system.native_bf16 else "bf16 (emulated on this GPU: slow)"
    choices = [
        Choice(bf16, Precision.bf16),
        Choice("fp16 (with loss scaling)", Precision.fp16),
        Choice("no (full fp32)", Precision.no),
    ]
    if fp8_available(answers, system):
        choices.append(Choice(f"fp8 ({fp8_backend(system)} backend)", Precision.fp8))
    return choices


# accelerate's fp8_config.backend for each package, in the order accelwiz prefers them.
FP8_BACKENDS = {"transformer_engine": "TE", "torchao": "AO", "msamp": "MSAMP"}


def fp8_backend(system: MachineProfile) -> str:
    """The first fp8 backend the TARGET has: from its profile's packages when it lists them (a probe or a saved
    profile), else Transformer Engine, which a preset is assumed to install."""
    return next((backend for package, backend in FP8_BACKENDS.items() if system.packages.get(package)), "TE")


def fp8_available(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """fp8 needs Ada/Hopper GPUs, a backend on the target, and a YAML that may hold mixed_precision (so not
    DeepSpeed). The backend is judged from the target's profile: where it lists packages (a probe of this machine
    or a saved profile) one must be installed; a preset lists none and is assumed to have one."""
    listed = any(system.package_known(name) for name in FP8_BACKENDS)
    backend = any(system.packages.get(name) for name in FP8_BACKENDS) if listed else True
    return system.fp8 and backend and not uses_deepspeed(answers, system)


def refuse_precision(raw: Any, answers: Mapping[str, Any], system: MachineProfile) -> None:
    """Why fp8 is not a choice here, when it was asked for: the GPU, the backend, or DeepSpeed.

    accelerate 1.15 itself runs fp8 under DeepSpeed (TE/torchao convert the model before deepspeed.initialize,
    MS-AMP wraps it), but only from `--mixed_precision fp8` on the launch command: with a deepspeed_config_file it
    raises when the YAML holds mixed_precision (DeepSpeedPlugin._deepspeed_config_checks), so the files the
    wizard writes cannot carry fp8 with ZeRO."""
    if str(getattr(raw, "value", raw)).strip().lower() != Precision.fp8.value:
        return
    gpu = system.gpus[0] if system.gpus else None
    if not system.fp8:
        where = f"sm_{gpu.compute_capability[0]}{gpu.compute_capability[1]}" if gpu else "no GPU"
        raise UsageError(f"precision: fp8 needs Ada or Hopper GPUs (sm_89 or newer); this machine has {where}",
                         hint="choose bf16 (or fp16 before Ampere)")
    listed = any(system.package_known(name) for name in FP8_BACKENDS)
    if listed and not any(system.packages.get(name) for name in FP8_BACKENDS):
        raise UsageError("precision: fp8 needs an fp8 backend on the machine, and none is installed",
                         hint="pip install transformer_engine (or torchao), or choose bf16")
    if uses_deepspeed(answers, system):
        strategy = answers.get("strategy")
        raise UsageError(
            f"precision: fp8 is not offered with DeepSpeed ZeRO ({getattr(strategy, 'label', strategy)}): with a "
            "deepspeed_config_file accelerate refuses mixed_precision in the YAML, so these files cannot carry fp8",
            hint=_fp8_strategy_hint(answers, system),
        )


def explain_precision(answers: Mapping[str, Any], system: MachineProfile) -> str | None:
    """On fp8 hardware with DeepSpeed chosen, why fp8 is not among the choices (the rest is plain)."""
    if system.fp8 and uses_deepspeed(answers, system):
        return ("fp8 is not offered with DeepSpeed ZeRO (accelerate refuses mixed_precision beside a "
                "deepspeed_config_file); FSDP and DDP take it")
    return None


def _fp8_strategy_hint(answers: Mapping[str, Any], system: MachineProfile) -> str:
    """The fastest strategy that takes fp8 (no DeepSpeed) and fits, named with its memory, or what to do."""
    plan = memory.plan_for(answers, system)
    offered = [c.value for c in strategy_choices(answers, system) if c.value.zero_stage is None]
    option = next((o for o in plan.fitting(nvme=False) if o.strategy in offered), None) if plan else None
    if option is not None:
        return (f"pass --strategy {option.strategy.value} for fp8 ({option.label}: {option.per_gpu_bytes / GIB:.1f}"
                f" GiB per GPU, fits), or keep ZeRO with --precision bf16")
    if plan is None and offered:
        return f"pass --strategy {offered[0].value} for fp8, or keep ZeRO with --precision bf16"
    return "no strategy without DeepSpeed fits this model here: keep ZeRO with --precision bf16"


def explain_accumulation(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"global batch = {micro} (micro-batch) x accumulation x {world} (processes)"


def default_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> int:
    """One micro-batch per process: the smallest valid target (accumulation 1)."""
    return int(answers.get("micro_batch") or 1) * world_size(answers, system)


def explain_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> str:
    micro, world = int(answers.get("micro_batch") or 1), world_size(answers, system)
    return f"a multiple of {micro * world} = {micro} (micro-batch) x {world} (processes)"


def launcher_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("SLURM (one srun starts every node; ranks come from SLURM)", Launcher.slurm),
        Choice("Node commands (`accelwiz run --print-node-commands`: run the printed command on each machine)",
               Launcher.node_commands),
    ]


def rdzv_choices(answers: Mapping[str, Any], system: MachineProfile) -> list[Choice]:
    return [
        Choice("c10d (torch's rendezvous; tolerates nodes starting at different times)", "c10d"),
        Choice("static (fixed ranks; every node must start together)", "static"),
    ]
