"""Answers -> rendered, checked files: the Accelerate YAML, its DeepSpeed JSON and the plan file, the step
between the questions and the disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.resolution.workload import DEFAULTS
from accelwiz.vocab import GIB, PLAN_PRECISION_OF_MIXED
from accelwiz.wizard.answers import Answers, Launcher, Owner
from accelwiz.wizard.build import DEEPSPEED_SUFFIX, build, launch_commands, trainer_arguments
from accelwiz.wizard.costing import Option, plan_for, workload_for
from accelwiz.wizard.render import Header, describe_hardware, render_json, render_yaml
from accelwiz.wizard.write import OutputFile, check_rendered

NOT_FITTING = "DOES NOT FIT"


@dataclass(frozen=True)
class Generated:
    accelerate: OutputFile
    deepspeed: OutputFile | None
    plan: OutputFile | None
    diagnostics: list[Any]
    estimate: str
    launch: list[str]
    option: Option | None = None  # the costed option the answers chose (None: no model, or not costed)
    trainer_arguments: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)  # what the user must still do before `accelwiz run`

    @property
    def files(self) -> list[OutputFile]:
        return [f for f in (self.accelerate, self.deepspeed, self.plan) if f is not None]

    @property
    def fits(self) -> bool:
        return self.option is None or self.option.fits


def deepspeed_path_for(output: Path, deepspeed_output: Path | None = None) -> Path:
    """The JSON beside the YAML and named after it (`zero3.yaml` -> `zero3.ds.json`), unless given."""
    if deepspeed_output is not None:
        return deepspeed_output
    return output.with_name(output.stem + DEEPSPEED_SUFFIX)


def generate(answers: Answers, system: MachineProfile, *, output: Path, command: str,
             system_spec: str | None = None, deepspeed_output: Path | None = None) -> Generated:
    from accelwiz.plan_file import plan_path_for

    json_path = deepspeed_path_for(output, deepspeed_output)
    # written as given (relative to where `accelerate launch` runs, as accelerate opens it), like -o itself
    pair = build(answers, system, deepspeed_file=json_path, hidden_size=_hidden_size(answers.model))
    plan = plan_for(answers.model_dump(), system) if answers.model else None
    option = plan.chosen(answers.model_dump()) if plan is not None else None
    estimate = estimate_line(answers, system, option)
    launch = launch_commands(answers, output, pair.accelerate, system)
    from accelwiz.wizard.post_plan import post_lines, precision_flags, todos, trl_arguments

    flags = trainer_arguments(answers, system) + precision_flags(answers) if answers.owner is Owner.trainer else []
    trl = trl_arguments(answers)  # DPOConfig/GRPOConfig's own: the plan records them, the header says them
    extra = _training_settings(answers)
    plan_path = plan_path_for(output)
    extra += post_lines(answers, option)
    todo = todos(answers, plan_path)
    extra += todo
    if flags or trl:
        extra.append(("TrainingArguments: " if flags else "TRL arguments: ") + " ".join(flags + trl))
    header = Header(command=command, hardware=describe_hardware(system), estimate=estimate, launch=launch,
                    extra=extra)
    yaml_file = OutputFile(output, render_yaml(pair.accelerate, header))
    json_file = OutputFile(json_path, render_json(pair.deepspeed)) if pair.deepspeed is not None else None
    plan_file = build_plan_file(answers, system, system_spec or system.name or "local", command=command,
                                output=output, deepspeed=json_path if json_file else None, option=option,
                                trainer_flags=flags + trl)
    from accelwiz.plan_file import dump_plan

    plan_output = OutputFile(plan_path, dump_plan(plan_file))
    # the memory rules resolve the plan about to be written with the files, as `accelwiz check` of them will
    spec = workload_for(answers.model_dump(), system).model if answers.model else None
    diagnostics = check_rendered(yaml_file, json_file, system, plan=plan_file, model=spec,
                                 multi_node=answers.num_machines > 1, trainer_flags=flags)
    return Generated(yaml_file, json_file, plan_output, diagnostics, estimate, launch, option,
                     flags + trl if flags else [], todo)


def build_plan_file(answers: Answers, system: MachineProfile, system_spec: str, *, command: str, output: Path,
                    deepspeed: Path | None, option: Option | None, trainer_flags: list[str]) -> Any:
    """The plan: what the estimate assumed and how the job is launched (accelwiz.plan_file.PlanFile)."""
    import os

    from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanTraining
    from accelwiz.wizard.post_plan import post_fields

    files = PlanFiles(accelerate=output.name,
                      deepspeed=os.path.relpath(deepspeed, output.parent) if deepspeed is not None else None)
    model = PlanModel(name=answers.model or "none", source=_model_source(answers.model),
                      parameters=_parameters(answers, system, trainable=False),
                      trainable_parameters=_parameters(answers, system, trainable=True))
    training = PlanTraining(
        owner=answers.owner.value,
        micro_batch=answers.micro_batch,
        gradient_accumulation=answers.gradient_accumulation,
        sequence_length=answers.sequence_length or DEFAULTS["seq_len"],
        gradient_checkpointing=bool(answers.gradient_checkpointing) if answers.model else False,
        attention="sdpa",
        precision=PLAN_PRECISION_OF_MIXED[answers.precision.value],  # type: ignore[arg-type]
        trainer_arguments=trainer_flags,
        **post_fields(answers, output),
    )
    return PlanFile(created_by=command, files=files, system=_plan_system(answers, system, system_spec),
                    launcher=_plan_launcher(answers), model=model, fine_tuning=_plan_fine_tuning(answers),
                    training=training, estimate=_plan_estimate(option))


def _plan_launcher(answers: Answers) -> Any:
    from accelwiz.plan_file import PlanLauncher

    several = answers.num_machines > 1
    # one vocabulary: the wizard's launcher answer is the plan's launcher kind
    kind = answers.launcher.value if several and answers.launcher else "local"
    return PlanLauncher(kind=kind, rdzv_backend=answers.rdzv_backend if several else None)  # type: ignore[arg-type]


def _plan_fine_tuning(answers: Answers) -> Any:
    """Full, or LoRA/QLoRA with alpha = 2 x rank (the common PEFT recipe) on every linear layer of the blocks, as
    the estimate assumed."""
    from accelwiz.plan_file import PlanFineTuning

    regime = answers.regime.value if answers.regime else "full"
    if regime == "full":
        return PlanFineTuning(method="full")
    rank = answers.lora_rank or DEFAULTS["lora_rank"]
    return PlanFineTuning(method=regime, lora_rank=rank, lora_alpha=2 * rank,  # type: ignore[arg-type]
                          lora_targets=["all-linear"])


def _plan_system(answers: Answers, system: MachineProfile, system_spec: str) -> Any:
    from accelwiz.plan_file import PlanSystem

    gpu = system.gpus[0] if system.gpus else None
    return PlanSystem(name=system_spec, machines=answers.num_machines, gpus_per_machine=answers.gpus,
                      processes_per_machine=answers.processes if not answers.gpus else None,
                      gpu=gpu.name if gpu else None, gpu_memory_bytes=gpu.memory_total_bytes if gpu else None,
                      host_memory_bytes=system.host.memory_total_bytes or None)


def _plan_estimate(option: Option | None) -> Any:
    from accelwiz.plan_file import PlanEstimate

    if option is None:
        return None
    return PlanEstimate(strategy=option.label, per_gpu_bytes=option.per_gpu_bytes, host_bytes=option.host_bytes,
                        verdict=option.verdict.verdict or "fits", phase=option.peak_phase)


def _model_source(model: str | None) -> str:
    if not model:
        return "none"
    path = Path(model).expanduser()
    if path.is_dir():
        return "checkpoint" if any(path.glob("*.safetensors")) or any(path.glob("*.bin")) else "config"
    if path.is_file():
        return "config"
    from accelwiz.modelspec.lookup import _BY_ANY_NAME, parse_count

    if model.strip().lower() in _BY_ANY_NAME:
        return "preset"
    return "parameters" if parse_count(model) is not None else "hub"


def _parameters(answers: Answers, system: MachineProfile, *, trainable: bool) -> int | None:
    if not answers.model:
        return None
    workload = workload_for(answers.model_dump(), system)
    return int(workload.trainable_parameters if trainable else workload.model.num_parameters)


def estimate_line(answers: Answers, system: MachineProfile, option: Option | None = None) -> str:
    """One line: the option, GPU memory per GPU and host RAM per machine (each named), and the verdict."""
    if not answers.model:
        return "not estimated (no model named; `accelwiz estimate --model NAME` gives one)"
    if not system.gpus:
        return _cpu_estimate_line(answers, system)
    plan = plan_for(answers.model_dump(), system)
    if plan is None:
        return "not estimated (`accelwiz estimate --model NAME` gives one)"
    option = option or plan.chosen(answers.model_dump())
    workload = _workload_words(answers)
    if option is None:
        return f"{answers.strategy.label} was not costed by the estimator ({workload})"
    verdict = option.verdict.verdict or "fits"
    shown = verdict if verdict != "does not fit" else f"{NOT_FITTING} ({_short_resource(option)})"
    return (
        f"{option.label}: GPU memory {option.per_gpu_bytes / GIB:.1f} of {plan.gpu_memory_bytes / GIB:.1f} GiB per "
        f"GPU; host RAM {option.host_bytes / GIB:.1f} of {(plan.host_memory_bytes or 0) / GIB:.1f} GiB per machine; "
        f"{shown} ({workload})"
    )


def _workload_words(answers: Answers) -> str:
    sequence = (f"prompt {answers.max_prompt_length} + completion {answers.max_completion_length}"
                if answers.kind.post else f"seq {answers.seq_len}")
    kind = f"{answers.kind.value}, " if answers.kind.post else ""
    return (f"{answers.model}, {kind}{answers.regime.value if answers.regime else 'full'}, {sequence}, "
            f"micro-batch {answers.micro_batch}")


def _cpu_estimate_line(answers: Answers, system: MachineProfile) -> str:
    """A machine without GPUs: the run's processes judged on host RAM, as `estimate --config` of this plan, `check`
    and `run` judge them (wizard/cpu_plan.cpu_cost): 'CPU, 2 processes: fits: host RAM 1.2 GiB of ...'."""
    from accelwiz.wizard.cpu_plan import cpu_cost

    cost = cpu_cost(answers.model_dump(), system)
    if cost is None:  # an answer cpu_cost could not make a workload of (the caller has checked the model)
        return "not estimated (`accelwiz estimate --config` of the written file gives one)"
    return f"CPU, {cost.processes} process(es) per machine: {cost.describe()} ({_workload_words(answers)})"


def _short_resource(option: Option) -> str:
    verdict = option.verdict
    if verdict.gpu is not None and verdict.gpu.verdict == "does not fit":
        return "GPU memory"
    return "host RAM"


def _training_settings(answers: Answers) -> list[str]:
    """Settings the training script applies when no DeepSpeed JSON carries them."""
    settings = (
        f"micro-batch {answers.micro_batch}, gradient accumulation {answers.gradient_accumulation}, "
        f"{answers.world_size} process(es): global batch {answers.global_batch}; gradient clipping "
        f"{answers.gradient_clipping:g}" + (" (off)" if answers.gradient_clipping == 0 else "")
    )
    if answers.owner is Owner.trainer:
        where = "(the HF Trainer's arguments below; the JSON says \"auto\")"
    else:
        where = "(in the DeepSpeed JSON)" if answers.uses_deepspeed else "(give these to the training script)"
    lines = [f"Training: {settings} {where}"]
    if answers.launcher is Launcher.slurm:
        lines.append(
            f"Multi-node: {answers.num_machines} machines; the srun command below gives each node its rank and the "
            "head node's address"
        )
    return lines


def _hidden_size(model: str | None) -> int | None:
    if not model:
        return None
    from accelwiz.modelspec.lookup import resolve_model

    return resolve_model(model).hidden_size
