"""The estimator's shapes of a resolved run: `Workload` and `PostTraining` from the resolution's sourced values.

The resolution (accelwiz/resolution/) knows nothing of the estimator; the estimator reads what it resolved. So the
translation lives here, one way: estimate -> resolution.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.posttraining import PostTraining
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.workload import Workload
    from accelwiz.resolution.posttraining import ResolvedPostTraining
    from accelwiz.resolution.workload import ResolvedWorkload


def to_workload(resolved: ResolvedWorkload, spec: ModelSpec) -> Workload:
    """The estimator's Workload for this resolution and model; UsageError for LoRA targets matching nothing and
    for a k-bit preparation flag without a quantized base."""
    from accelwiz.estimate.refusals import refuse_base_dtype_flag, refuse_kbit_flag
    from accelwiz.estimate.workload import Workload

    refuse_kbit_flag(resolved)
    refuse_base_dtype_flag(resolved)
    from accelwiz.resolution.workload import estimator_precision

    workload = Workload(
        model=spec,
        micro_batch=resolved.micro_batch.value,
        gradient_accumulation=resolved.gradient_accumulation.value,
        seq_len=resolved.seq_len.value,
        regime=resolved.method.value,
        lora_rank=resolved.lora_rank.value,
        lora_targets=lora_target_names(resolved),
        lora_dropout=float(resolved.lora_dropout.value),
        modules_to_save=modules_to_save(resolved, spec),
        precision=estimator_precision(resolved.precision.value, resolved.weights_dtype.value),
        optimizer=resolved.optimizer.value,
        optimizer_kernel=resolved.optimizer_kernel.value,
        gradient_checkpointing=bool(resolved.gradient_checkpointing.value),
        attention=resolved.attention.value,
        stack=resolved.stack.value,  # the versions the run trains with (resolution/stack.py)
        varying_lengths=bool(resolved.varying_lengths.value),
        loss_dtype=model_loss_dtype(resolved, spec),
        loss_kernel=model_loss_kernel(resolved, spec),
        kbit_prepared=bool(resolved.kbit_prepared.value),
        expandable_segments=bool(resolved.expandable_segments.value),
        **resolved.base_as_loaded(),
    )
    if workload.regime != "full" and workload.trainable_parameters == 0:
        names = ", ".join(dict.fromkeys(t.kind for t in spec.block_linears()))
        raise UsageError(f"lora_targets {', '.join(resolved.lora_targets.value)} ({resolved.lora_targets.source}) "
                         f"matches no linear layer of {spec.name}", hint=f"its block linears are {names} (or all-linear)")
    return workload


def model_loss_dtype(resolved: ResolvedWorkload, spec: ModelSpec) -> str:
    """The loss dtype the resolution gives, or "logits" where nothing set it and the model's own code computes
    its loss on the logits without upcasting them (Qwen-1, Baichuan2: ModelSpec.loss_upcasts_logits)."""
    from accelwiz.resolution.workload import DEFAULT

    if resolved.loss_dtype.source == DEFAULT and not spec.loss_upcasts_logits:
        return "logits"
    return resolved.loss_dtype.value


def model_loss_kernel(resolved: ResolvedWorkload, spec: ModelSpec) -> str:
    """The loss kernel the resolution gives, where Liger has a fused loss for the model's type; a Trainer's
    use_liger_kernel on another type patches nothing (liger's `_apply_liger_kernel_to_instance` returns), and a
    flag asking for it is refused (estimate/fused_loss.py)."""
    from accelwiz.estimate.fused_loss import LIGER_FUSED_LOSS_FAMILIES
    from accelwiz.resolution.workload import FLAG

    kernel = resolved.loss_kernel
    if kernel.value != "liger" or spec.family in LIGER_FUSED_LOSS_FAMILIES:
        return kernel.value
    if kernel.source == FLAG:
        raise UsageError(f"--loss-kernel liger: Liger has no fused loss for {spec.name} (model type {spec.family})",
                         hint="drop --loss-kernel: transformers' loss runs")
    return "standard"


def modules_to_save(resolved: ResolvedWorkload, spec: ModelSpec) -> tuple[str, ...]:
    """PEFT's modules_to_save as resolved, each checked against the model (estimate/modules_to_save.py); refused
    for full fine-tuning, where every module trains already."""
    from accelwiz.estimate.modules_to_save import check_modules_to_save

    names, method = tuple(resolved.lora_modules_to_save.value), resolved.method.value
    if names and method == "full":
        raise UsageError(f"lora_modules_to_save {', '.join(names)} ({resolved.lora_modules_to_save.source}) is "
                         "PEFT's, beside LoRA adapters; full fine-tuning trains every module already",
                         hint="pass --lora or --qlora, or drop --lora-modules-to-save")
    check_modules_to_save(spec, names, method)
    return names


def lora_target_names(resolved: ResolvedWorkload) -> tuple[str, ...]:
    """The targets with `all-linear` spelled out as the estimator's module-name list."""
    from accelwiz.estimate.workload import ALL_LINEAR

    return tuple(dict.fromkeys(name for t in resolved.lora_targets.value
                               for name in (ALL_LINEAR if t == "all-linear" else (t,))))


def to_post_training(resolved: ResolvedPostTraining, accumulation: int = 1) -> PostTraining:
    """The estimator's PostTraining (GRPO's steps per generation default to the accumulation, as in TRL)."""
    from accelwiz.estimate.posttraining import PostTraining

    values = {f.name: getattr(resolved, f.name).value for f in fields(resolved) if f.name != "reward"}
    values["steps_per_generation"] = values["steps_per_generation"] or accumulation
    return PostTraining(**values)


def workload_from_options(*, model: str, micro_batch: int | None, seq_len: int | None, refuse_beyond: bool = False,
                          **more: Any) -> Workload:
    """The estimator's Workload for `--model NAME` and the options given (None: not given, the default applies);
    bad values become a UsageError with the valid choices. `refuse_beyond`: a sequence longer than the model's
    positions is a UsageError too (`estimate`; `check` reports it as AW507 instead)."""
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.resolution.options import flags_from_options
    from accelwiz.resolution.workload import beyond_positions, resolve_workload

    spec = resolve_model(model)
    flags = flags_from_options(micro_batch=micro_batch, seq_len=seq_len, **more)
    legacy = flags.pop("legacy_trainer", False)
    resolved = resolve_workload(flags=flags, max_positions=spec.max_position_embeddings)
    problem = beyond_positions(resolved.seq_len.value, spec.max_position_embeddings, spec.name) if refuse_beyond \
        else None
    if problem is not None:
        raise UsageError(problem, hint=f"pass --seq-len {spec.max_position_embeddings} or less")
    workload = to_workload(resolved, spec)
    return workload if not legacy else replace(workload, legacy_trainer=True)
