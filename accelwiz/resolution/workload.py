"""The workload of one run, resolved once: sequence, batch, method, precision, checkpointing, attention.

Every command that needs a workload gets it here: `check` (its memory rules), `estimate`, `init` (each answer
costed), `convert`, `run` and the built-in trainer, and the trainer's run report. Each value keeps its source.

Layers, lowest first; a higher layer replaces a value field by field:
1. `DEFAULTS`, the one table of workload defaults (the sequence length capped at the model's positions);
2. the plan `init` wrote (or the wizard's answers so far);
3. the Accelerate YAML and DeepSpeed JSON: what the launcher and DeepSpeed will use (a written micro-batch,
   accumulation, and the precision the run computes in);
4. the HF Trainer's arguments (trainer_layer.py), when the Trainer runs the loop: it owns the batch,
   checkpointing and precision, given or at its own defaults (a Trainer command line without
   `--gradient_checkpointing` does not checkpoint);
5. command-line flags (`check --seq-len`, `run --micro-batch`, ...).

The library versions the run trains with (`stack`: transformers, bitsandbytes, accelerate, torch) are the
installed ones (or a --system profile's) unless `--stack` names others (resolution/stack.py); no file writes them.
The Trainer's default AdamW kernel follows them (resolution/trainer_optim.py).

No torch, no pydantic: `check` and `estimate` start fast.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from accelwiz.resolution.alloc_conf import expandable_segments
from accelwiz.resolution.sourced import (  # noqa: F401 (re-exported)
    BASE_DTYPE_FLAG, DEFAULT, FLAG, MODEL, PLAN, TRAINER, Sourced)
from accelwiz.resolution.stack import Stack, resolved_stack
from accelwiz.resolution.trainer_layer import trainer_layer

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.effective import EffectiveConfig
    from accelwiz.plan_file import PlanFile

DEFAULT_SEQ_LEN = 2048

# The one table of defaults: the trainer, init, check and estimate all start here.
DEFAULTS: dict[str, Any] = {
    "micro_batch": 1,
    "gradient_accumulation": 1,
    "seq_len": DEFAULT_SEQ_LEN,
    "method": "full",
    "lora_rank": 16,
    "lora_alpha": None,  # 2 x rank (PEFT recipes' usual choice), derived in `resolve_workload`
    "lora_targets": ("all-linear",),
    "lora_dropout": 0.0,  # PEFT's LoraConfig default (an nn.Identity); recipes often use 0.05 or 0.1
    # PEFT's LoraConfig.modules_to_save: whole modules trained beside the adapters, each a trainable copy of the
    # frozen original (estimate/modules_to_save.py); none by default, as PEFT's
    "lora_modules_to_save": (),
    "precision": "bf16",  # what a mixed-precision run computes in; a config that says otherwise wins
    # the dtype the weights are loaded in (None: derived after the layers, `_load_dtype`); with `precision`
    # it says how the run trains: fp32 weights under 16-bit compute are autocast over an fp32 master
    # (the estimator's "mixed"), 16-bit weights train in 16 bits (its "bf16", torch AdamW's states in bf16)
    "weights_dtype": None,
    "optimizer": "adamw",
    # the built-in trainer's torch.optim.AdamW: foreach on CUDA (estimate/workload.py `optimizer_kernel`)
    "optimizer_kernel": "foreach",
    "gradient_checkpointing": False,
    "attention": "sdpa",
    # batches padded to their own longest sample (estimate/varying_lengths.py); the built-in trainer packs
    "varying_lengths": False,
    # the dtype the loss runs in (estimate/loss_dtype.py): transformers' loss upcasts the logits
    "loss_dtype": "fp32",
    # how the loss is computed: on the full logits, Liger's fused linear cross-entropy (estimate/fused_loss.py) or
    # TRL's fused LM head (estimate/trl_fused_head.py)
    "loss_kernel": "standard",
    # QLoRA: PEFT's prepare_model_for_kbit_training casts the non-quantized parameters to fp32; the built-in
    # trainer calls it (trainer/finetune.py `apply_method`), a Trainer or TRL run does not (the trainer layer)
    "kbit_prepared": True,
    # the caching allocator's expandable segments (estimate/allocator_expandable.py); read from the environment
    "expandable_segments": False,
}
# why each of these defaults is what the built-in trainer runs (shown beside "default" in summaries)
_DEFAULT_NOTES = {
    "varying_lengths": "the built-in trainer packs its data into windows of seq_len tokens (trainer/data.py pack)",
    "loss_dtype": "transformers' causal-LM loss upcasts the logits to fp32 (ForCausalLMLoss)",
    "loss_kernel": "transformers' loss on the full logits (the built-in trainer applies no Liger kernel)",
    "kbit_prepared": "the built-in trainer calls PEFT's prepare_model_for_kbit_training (trainer/finetune.py)",
}

# workload fields no file writes: the values table shows them from the resolution (`explained`)
_NOT_IN_FILES = ("varying_lengths", "loss_dtype", "loss_kernel", "kbit_prepared", "expandable_segments", "stack")

_FILE_SOURCES = {"yaml": "accelerate yaml", "json": "deepspeed json", "accelerate default": "accelerate default",
                 "deepspeed default": "deepspeed default"}
# effective.py's mixed_precision values, in the plan's precision vocabulary
_PRECISION = {"no": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8"}


@dataclass(frozen=True)
class ResolvedWorkload:
    """The workload a run trains with; every field a `Sourced`."""

    micro_batch: Sourced
    gradient_accumulation: Sourced
    seq_len: Sourced
    method: Sourced
    lora_rank: Sourced
    lora_alpha: Sourced
    lora_targets: Sourced
    lora_dropout: Sourced
    lora_modules_to_save: Sourced
    precision: Sourced
    weights_dtype: Sourced
    optimizer: Sourced
    optimizer_kernel: Sourced
    gradient_checkpointing: Sourced
    attention: Sourced
    varying_lengths: Sourced
    loss_dtype: Sourced
    loss_kernel: Sourced
    kbit_prepared: Sourced
    expandable_segments: Sourced  # PYTORCH_CUDA_ALLOC_CONF's, else a flag's (resolution/alloc_conf.py)
    # the versions of the libraries whose version changes memory (resolution/stack.py `Stack`)
    stack: Sourced

    def items(self) -> list[tuple[str, Sourced]]:
        names = [f.name for f in fields(self)]
        if self.method.value == "full":
            names = [n for n in names if not n.startswith("lora_")]
        if self.method.value != "qlora":  # PEFT's k-bit preparation is for a quantized base only
            names.remove("kbit_prepared")
        return [(n, getattr(self, n)) for n in names]

    def value(self, name: str) -> Any:
        return getattr(self, name).value

    def explained(self) -> list[tuple[str, Sourced]]:
        """The fields the values table (`check --explain`, `run`'s summary) shows beside the files' values: the
        ones no file writes (the others are the effective values' rows, resolution/given.py)."""
        return [(name, item) for name, item in self.items() if name in _NOT_IN_FILES]

    def base_as_loaded(self) -> dict[str, Any]:
        """The frozen base's dtype where a Trainer or TRL run loads it (`load_dtype.trainer_load_dtype`) or
        `--base-dtype` says it (its own source); the built-in trainer's own choice otherwise (the estimator's
        defaults), `--precision`'s load dtype included. Whether PEFT's k-bit preparation then casts it is
        `kbit_prepared`."""
        if self.weights_dtype.source not in (TRAINER, BASE_DTYPE_FLAG) or self.method.value == "full":
            return {}
        return {"base_dtype": self.weights_dtype.value}


def resolve_workload(*, plan: PlanFile | None = None, answers: dict[str, Any] | None = None,
                     effective: EffectiveConfig | None = None, trainer_args: TrainerArguments | None = None,
                     flags: dict[str, Any] | None = None, max_positions: int | None = None) -> ResolvedWorkload:
    """The workload from every layer (module docstring); `max_positions` caps the default sequence length."""
    chosen = {name: Sourced(value, DEFAULT, _DEFAULT_NOTES.get(name, "")) for name, value in DEFAULTS.items()}
    chosen["stack"] = resolved_stack((flags or {}).get("stack"))
    chosen["expandable_segments"] = expandable_segments()  # the environment the run launches with
    if max_positions is not None and max_positions < DEFAULT_SEQ_LEN:
        chosen["seq_len"] = Sourced(max_positions, DEFAULT, f"the model's {max_positions} positions")
    files = file_layer(effective)
    trainer = trainer_layer(trainer_args, chosen["stack"].value)
    for layer in (plan_layer(plan), _given(answers or {}, "answer"), files, trainer, _given(flags or {}, FLAG)):
        chosen.update(layer)
    seq = chosen["seq_len"]
    if max_positions is not None and plan is not None and seq.source == PLAN and seq.value > max_positions \
            and plan.model.missing:
        # a plan written without a model sized the sequence for none: the model named now brings its own default
        chosen["seq_len"] = Sourced(max_positions, MODEL, f"the model's {max_positions} positions (the plan's "
                                    f"{seq.value} was planned without a model)")
    for name in ("optimizer_kernel", "optimizer"):  # DeepSpeed's JSON optimizer runs, not the Trainer's
        if name in files and name not in (flags or {}):
            chosen[name] = files[name]
    if chosen["weights_dtype"].value is None:
        chosen["weights_dtype"] = _load_dtype(chosen["precision"])
    if chosen["lora_alpha"].value is None:
        rank = chosen["lora_rank"]
        chosen["lora_alpha"] = Sourced(2 * rank.value, "derived", "2 x lora_rank")
    targets = chosen["lora_targets"]
    if isinstance(targets.value, str):
        chosen["lora_targets"] = replace(targets, value=tuple(t.strip() for t in targets.value.split(",")
                                                              if t.strip()))
    elif isinstance(targets.value, list):
        chosen["lora_targets"] = replace(targets, value=tuple(targets.value))
    saved = chosen["lora_modules_to_save"]
    if not isinstance(saved.value, tuple):  # the plan's list, a flag's tuple: one spelling for every reader
        chosen["lora_modules_to_save"] = replace(saved, value=tuple(saved.value))
    return ResolvedWorkload(**chosen)


def beyond_positions(seq_len: int, positions: int | None, model: str) -> str | None:
    """Why a sequence cannot train on this model, or None: longer than its positions, a model with a learned
    position table indexes past its end (an IndexError in every worker), and a rotary one trains on positions it
    never saw. `init`, `check` (AW507), `estimate` and `run` all refuse it with this message."""
    if positions and seq_len > positions:
        return f"sequence length {seq_len} is longer than the {positions} positions of {model}"
    return None


def plan_layer(plan: PlanFile | None) -> dict[str, Sourced]:
    """What the plan records (LoRA fields only for a LoRA or QLoRA plan)."""
    if plan is None:
        return {}
    training, tuning = plan.training, plan.fine_tuning
    values: dict[str, Any] = {
        "micro_batch": training.micro_batch, "gradient_accumulation": training.gradient_accumulation,
        "seq_len": training.sequence_length, "method": tuning.method, "precision": training.precision,
        "optimizer": training.optimizer, "gradient_checkpointing": training.gradient_checkpointing,
        "attention": training.attention,
    }
    if tuning.method != "full":
        values.update({name: getattr(tuning, name) for name in ("lora_rank", "lora_alpha", "lora_targets",
                                                                "lora_dropout", "lora_modules_to_save")
                       if getattr(tuning, name) is not None})
    return {name: Sourced(value, PLAN) for name, value in values.items()}


def file_layer(effective: EffectiveConfig | None) -> dict[str, Sourced]:
    """What the YAML and JSON set: a written micro-batch and accumulation (what DeepSpeed uses; `check` reports a
    plan that disagrees) and the precision the run computes in."""
    if effective is None or not (effective.has_yaml or effective.uses_deepspeed):
        return {}
    layer: dict[str, Sourced] = {}
    for name, value in (("micro_batch", effective.micro_batch),
                        ("gradient_accumulation", effective.gradient_accumulation)):
        if value.source in ("yaml", "json") and isinstance(value.strict, int) and value.strict > 0:
            layer[name] = Sourced(value.strict, _FILE_SOURCES[value.source], value.note)
    optimizer = effective.optimizer_type
    if effective.uses_deepspeed and optimizer.source == "json" and optimizer.value:
        layer["optimizer_kernel"] = Sourced("fused", "deepspeed json", f"optimizer.type {optimizer.value}: DeepSpeed "
                                            "builds FusedAdam (CPUAdam under offload), not the script's optimizer")
        if str(optimizer.value).lower() in ("adam", "adamw"):
            layer["optimizer"] = Sourced("adamw", "deepspeed json", f"optimizer.type {optimizer.value}")
    precision = effective.mixed_precision
    # accelerate's default "no" leaves the precision to the script (which may autocast): not a written choice;
    # the Trainer's fill of a DeepSpeed "auto" (no --bf16/--fp16: "no") is what DeepSpeed then runs
    if precision.source in ("yaml", "json", "deepspeed default", "trainer") and precision.value in _PRECISION:
        layer["precision"] = Sourced(_PRECISION[precision.value], _FILE_SOURCES.get(precision.source, TRAINER),
                                     precision.note)
    return layer


def estimator_precision(compute: str, weights: str) -> str:
    """The estimator's precision (estimate/workload.py) for a compute dtype and the weights' loaded dtype: fp32
    weights are "fp32" without 16-bit compute and "mixed" (autocast over fp32 weights) with it; 16-bit weights are
    "bf16" (weights, gradients and torch AdamW's states in 16 bits). Where the engine keeps another master copy
    (DeepSpeed's ZeRO optimizer, accelerate's FSDP upcast) the estimator applies it (states.py, memory.py)."""
    if weights in ("bf16", "fp16"):
        return "bf16"
    return "fp32" if compute == "fp32" else "mixed"


def _load_dtype(precision: Sourced) -> Sourced:
    """The built-in trainer's load dtype (trainer/models.py `load_pretrained`): fp32, with the Accelerator's
    autocast for 16-bit compute (a LoRA base is loaded in 16 bits, its fp32 adapters trained under autocast)."""
    return Sourced("fp32", DEFAULT, "the built-in trainer loads fp32 weights"
                   + ("" if precision.value == "fp32" else f"; the Accelerator computes in {precision.value}"))


def _given(values: dict[str, Any], source: str) -> dict[str, Sourced]:
    return {name: value if isinstance(value, Sourced) else Sourced(value, source)
            for name, value in values.items() if name in DEFAULTS and value is not None}

