"""What a post-training run (TRL's DPO or GRPO) adds to the workload, resolved once: the kind, the lengths, GRPO's
generations and reward, the reference model's weight, the generation backend.

`estimate --kind`, `check` (AW813 and the plan's kind), `run` and the built-in trainer all read it here, with the
same layers as the workload (resolution/workload.py), lowest first:
1. `POST_DEFAULTS`, TRL 1.16's own defaults (GRPOConfig, DPOConfig), the lengths capped at the model's positions;
2. the plan (`training.kind`, `reward`, `num_generations`, the lengths, `beta`);
3. TRL's arguments, as `check --kind` reads them after `--` or from a recipe (only those given: TRL's defaults
   are layer 1);
4. command-line flags.

TRL's DPOConfig has one `max_length` (prompt + completion); GRPOConfig a `max_completion_length` and no prompt
limit. accelwiz keeps the prompt and the completion apart, as the estimator needs them: a DPO `max_length` is
split around the prompt length given elsewhere, else in halves.

The kind changes one field of the workload: DPO and GRPO compute their loss through TRL's fused LM head
(`posttraining_workload`, called where the run is resolved), as SFTTrainer does.

No torch, no pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError
from accelwiz.resolution.liger_grpo import liger_grpo_releases, runs_liger_grpo
from accelwiz.resolution.loss_kernel import TRL_TRAINERS, trl_fused_head, trl_refuses_kernel
from accelwiz.resolution.workload import DEFAULT, FLAG, PLAN, Sourced
from accelwiz.vocab import TRAINING_KINDS

if TYPE_CHECKING:
    from accelwiz.config.trl_arguments import TrlArguments
    from accelwiz.plan_file import PlanFile
    from accelwiz.resolution.workload import ResolvedWorkload

KINDS = TRAINING_KINDS  # the one list: accelwiz/vocab.py
GENERATIONS = ("hf", "vllm-colocate", "vllm-server")
TRL = "trl arguments"

# The one table of post-training defaults: TRL 1.16's (trl/trainer/grpo_config.py, dpo_config.py).
POST_DEFAULTS: dict[str, Any] = {
    "kind": "sft",
    "max_prompt_length": 512,  # DPOConfig.max_length 1024 = prompt + completion
    "max_completion_length": 512,  # GRPOConfig
    "num_generations": 8,  # GRPOConfig
    "steps_per_generation": None,  # GRPOConfig: the gradient accumulation when unset
    "beta": None,  # the trainer's: DPO 0.1, GRPO 0.0 (no reference model)
    "precompute_ref_log_probs": False,  # DPOConfig
    "generation": "hf",  # GRPOConfig.use_vllm False
    "vllm_gpu_memory_utilization": 0.3,  # GRPOConfig (0.9 before TRL 0.18)
    "vllm_tensor_parallel_size": 1,
    "vllm_server_gpus": 1,  # the GPUs `trl vllm-serve` takes (not a TRL field: the server's own launch)
    "vllm_max_model_length": None,  # vLLM: the model's context length
    "reward": None,  # GRPO: FILE.py:FUNCTION
}

# TRL argument -> field, where the names agree
_TRL_SAME = ("num_generations", "max_completion_length", "beta", "steps_per_generation", "precompute_ref_log_probs",
             "vllm_gpu_memory_utilization", "vllm_tensor_parallel_size", "vllm_max_model_length")


@dataclass(frozen=True)
class ResolvedPostTraining:
    """The post-training settings of a run; every field a `Sourced`."""

    kind: Sourced
    max_prompt_length: Sourced
    max_completion_length: Sourced
    num_generations: Sourced
    steps_per_generation: Sourced
    beta: Sourced
    precompute_ref_log_probs: Sourced
    generation: Sourced
    vllm_gpu_memory_utilization: Sourced
    vllm_tensor_parallel_size: Sourced
    vllm_server_gpus: Sourced
    vllm_max_model_length: Sourced
    reward: Sourced

    @property
    def is_posttraining(self) -> bool:
        return self.kind.value != "sft"

    @property
    def sequence(self) -> int:
        return self.max_prompt_length.value + self.max_completion_length.value

    def value(self, name: str) -> Any:
        return getattr(self, name).value

    def items(self) -> list[tuple[str, Sourced]]:
        """The fields that matter for this kind (the run summary, run_report.json, `--explain`)."""
        if not self.is_posttraining:
            return [("kind", self.kind)]
        grpo_only = {"num_generations", "steps_per_generation", "generation", "reward"}
        dpo_only = {"precompute_ref_log_probs"}
        names = [f.name for f in fields(self) if not f.name.startswith("vllm_")
                 and f.name not in (grpo_only if self.kind.value == "dpo" else dpo_only)]
        if self.generation.value != "hf":
            names += [f.name for f in fields(self) if f.name.startswith("vllm_")]
        return [(name, getattr(self, name)) for name in names]


def resolve_posttraining(*, plan: PlanFile | None = None, trl_args: TrlArguments | None = None,
                         flags: dict[str, Any] | None = None, max_positions: int | None = None) -> ResolvedPostTraining:
    """The post-training settings from every layer (module docstring); UsageError for a value no layer may hold."""
    chosen = {name: Sourced(value, DEFAULT) for name, value in POST_DEFAULTS.items()}
    if max_positions is not None and chosen["max_prompt_length"].value * 2 > max_positions:
        half = max(1, max_positions // 2)
        note = f"the model's {max_positions} positions, in halves"
        chosen["max_prompt_length"] = Sourced(half, DEFAULT, note)
        chosen["max_completion_length"] = Sourced(max(1, max_positions - half), DEFAULT, note)
    for layer in (plan_layer(plan), trl_layer(trl_args),
                  {k: Sourced(v, FLAG) for k, v in (flags or {}).items() if v is not None and k in POST_DEFAULTS}):
        _split_max_length(layer, chosen)
        chosen.update(layer)
    resolved = ResolvedPostTraining(**chosen)
    _check(resolved)
    return resolved


def plan_layer(plan: PlanFile | None) -> dict[str, Sourced]:
    """The plan's post-training fields (a reward file relative to the plan, like every path in it)."""
    if plan is None:
        return {}
    training = plan.training
    layer = {name: Sourced(getattr(training, name), PLAN) for name in
             ("kind", "num_generations", "max_prompt_length", "max_completion_length", "beta", "reward")
             if getattr(training, name, None) is not None}
    if "reward" in layer:
        file, _, function = str(layer["reward"].value).rpartition(":")
        if file:
            layer["reward"] = Sourced(f"{plan.resolve(file)}:{function}", PLAN, f"training.reward {file}:{function}")
    return layer


def trl_layer(args: TrlArguments | None) -> dict[str, Sourced]:
    """TRL's arguments as given (after `--` or in a recipe); their defaults are `POST_DEFAULTS` already."""
    if args is None or not hasattr(args, "trl"):
        return {}
    given, trl = args.trl_given, args.trl
    layer = {"kind": Sourced(args.kind, TRL, "check --kind")}
    for name in _TRL_SAME:
        if name in given:
            layer[name] = Sourced(trl[name], TRL, given[name])
    if "use_vllm" in given or ("vllm_mode" in given and trl.get("use_vllm")):
        backend = f"vllm-{trl.get('vllm_mode', 'colocate')}" if trl.get("use_vllm") else "hf"
        layer["generation"] = Sourced(backend, TRL, given.get("use_vllm") or given["vllm_mode"])
    if "max_length" in given and trl.get("max_length"):
        layer["max_length"] = Sourced(trl["max_length"], TRL, given["max_length"])
    return layer


def _split_max_length(layer: dict[str, Sourced], chosen: dict[str, Sourced]) -> None:
    """DPO's max_length (prompt + completion) into the two lengths: around a prompt length this layer or a lower
    one gave, else in halves."""
    total = layer.pop("max_length", None)
    if total is None:
        return
    prompt = layer.get("max_prompt_length") or chosen["max_prompt_length"]
    if prompt.source == DEFAULT or prompt.value >= total.value:
        prompt = Sourced(max(1, total.value // 2), total.source, f"half of {total.note}")
    layer["max_prompt_length"] = prompt
    layer["max_completion_length"] = Sourced(total.value - prompt.value, total.source,
                                             f"{total.note} less the prompt's {prompt.value}")


def _check(resolved: ResolvedPostTraining) -> None:
    for name, allowed in (("kind", KINDS), ("generation", GENERATIONS)):
        item = getattr(resolved, name)
        if item.value not in allowed:
            raise UsageError(f"invalid {name} {item.value!r} ({item.source})", hint=f"choose {'|'.join(allowed)}")
    for name in ("max_prompt_length", "max_completion_length", "num_generations", "vllm_tensor_parallel_size",
                 "vllm_server_gpus"):
        item = getattr(resolved, name)
        if not isinstance(item.value, int) or isinstance(item.value, bool) or item.value < 1:
            raise UsageError(f"{name} must be a positive integer, got {item.value!r} ({item.source})",
                             hint=f"set {name} to 1 or more")


def posttraining_workload(workload: ResolvedWorkload, kind: str | None) -> ResolvedWorkload:
    """A DPO/GRPO run's workload with the loss kernel TRL 1.16 runs: its fused LM head, in the trainer layer as for
    SFT (resolution/loss_kernel.py), so `check --explain`, the run summary and the estimate say so. A flag asking
    for another kernel is refused with TRL's reason; for SFT (or None) the workload is unchanged."""
    if kind not in TRL_TRAINERS or kind == "sft":
        return workload
    asked = workload.loss_kernel
    if kind == "grpo" and asked.value == "liger" and runs_liger_grpo(workload.stack.value.trl):
        return workload  # TRL 0.17-1.12's LigerFusedLinearGRPOLoss (resolution/liger_grpo.py, estimate/liger_grpo.py)
    if asked.source == FLAG and asked.value != "trl-fused-head":
        raise UsageError(f"--loss-kernel {asked.value} with --kind {kind}: {trl_refuses_kernel(asked.value, kind)}",
                         hint="drop --loss-kernel (TRL's fused LM head runs), or pass --kind sft" + (
                             f"; GRPO with Liger's loss: --stack trl==VERSION, {liger_grpo_releases()}"
                             if kind == "grpo" and asked.value == "liger" else ""))
    return replace(workload, loss_kernel=trl_fused_head(kind))


def beyond_positions(post: ResolvedPostTraining, positions: int | None, model: str) -> str | None:
    """Why a DPO/GRPO sequence (prompt + completion) cannot train on this model, or None."""
    from accelwiz.resolution.workload import beyond_positions as sequence_beyond

    if not post.is_posttraining:
        return None
    problem = sequence_beyond(post.sequence, positions, model)
    if problem is None:
        return None
    return (f"{problem}: max_prompt_length {post.max_prompt_length.value} ({post.max_prompt_length.source}) + "
            f"max_completion_length {post.max_completion_length.value} ({post.max_completion_length.source})")


def trl_config_fields(workload: ResolvedWorkload, post: ResolvedPostTraining) -> dict[str, Any]:
    """The DPOConfig/GRPOConfig fields the built-in trainer takes from the resolved run: trainer/trl_run.py builds
    the config with them, and `check` and `run`'s preflight judge them as TRL's arguments (`as_arguments`), so
    the rules see the config that will be built. The precision is the run's where a file or the plan wrote one:
    TRL's own default (bf16 on) would override it; with both off, transformers takes the launcher's
    ACCELERATE_MIXED_PRECISION (training_args.py, "Mixed Precision")."""
    precision = workload.precision.value if workload.precision.source != DEFAULT else None
    values: dict[str, Any] = {
        "per_device_train_batch_size": workload.micro_batch.value,
        "gradient_accumulation_steps": workload.gradient_accumulation.value,
        "gradient_checkpointing": bool(workload.gradient_checkpointing.value),
        "bf16": precision == "bf16",
        "fp16": precision == "fp16",
    }
    if post.beta.value is not None:
        values["beta"] = post.beta.value
    if post.kind.value == "dpo":
        values["max_length"] = post.sequence
    elif post.kind.value == "grpo":
        values.update(num_generations=post.num_generations.value,
                      max_completion_length=post.max_completion_length.value)
    return values


def as_arguments(values: dict[str, Any]) -> list[str]:
    """TRL config fields as the command line TrlParser reads (`--bf16 False`, `--beta 0.1`)."""
    return [token for name, value in values.items() for token in (f"--{name}", str(value))]
