"""Answers -> rendered, checked files: the step between the questions and the disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelwiz.defaults import DEFAULT_DEEPSPEED_CONFIG
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Answers, Launcher
from accelwiz.wizard.build import build, launch_commands, machines_in_file
from accelwiz.wizard.plan import GIB, Option, plan_for, workload_for
from accelwiz.wizard.render import Header, describe_hardware, render_json, render_yaml
from accelwiz.wizard.write import OutputFile, check_rendered

NOT_FITTING = "DOES NOT FIT"


@dataclass(frozen=True)
class Generated:
    accelerate: OutputFile
    deepspeed: OutputFile | None
    diagnostics: list[Any]
    estimate: str
    launch: list[str]

    @property
    def files(self) -> list[OutputFile]:
        return [f for f in (self.accelerate, self.deepspeed) if f is not None]


def deepspeed_path_for(output: Path) -> Path:
    """The JSON beside the YAML, written as a path relative to where `accelerate launch` will run."""
    return output.with_name(DEFAULT_DEEPSPEED_CONFIG.name)


def generate(answers: Answers, system: MachineProfile, *, output: Path, command: str) -> Generated:
    json_path = deepspeed_path_for(output)
    pair = build(answers, system, deepspeed_file=json_path, hidden_size=_hidden_size(answers.model))
    estimate = estimate_line(answers, system)
    launch = launch_commands(answers, output)
    header = Header(
        command=command,
        hardware=describe_hardware(system),
        estimate=estimate,
        launch=launch,
        extra=_training_settings(answers),
    )
    yaml_file = OutputFile(output, render_yaml(pair.accelerate, header))
    json_file = OutputFile(json_path, render_json(pair.deepspeed)) if pair.deepspeed is not None else None
    workload = workload_for(answers.model_dump(), system) if answers.model else None
    as_launched = None
    if machines_in_file(answers) != answers.num_machines:
        # Under SLURM the YAML describes one node and srun adds the others (and each node's rank and the head
        # node's address): the rules judge the run as srun launches it, not a one-node run that never happens.
        from accelwiz.rules.context import LaunchFacts

        as_launched = LaunchFacts(supplies_rendezvous=True, machines_as_launched=answers.num_machines)
    diagnostics = check_rendered(yaml_file, json_file, system, workload, launch=as_launched)
    return Generated(yaml_file, json_file, diagnostics, estimate, launch)


def estimate_line(answers: Answers, system: MachineProfile) -> str:
    plan = plan_for(answers.model_dump(), system)
    if plan is None:
        reason = "no model named" if not answers.model else "no GPU"
        return f"not estimated ({reason}; `accelwiz estimate --model NAME` gives one)"
    option = _chosen_option(plan.options, answers)
    workload = (
        f"{answers.model}, {answers.regime.value if answers.regime else 'full'}, seq {answers.seq_len}, "
        f"micro-batch {answers.micro_batch}"
    )
    if option is None:
        return f"{answers.strategy.label} was not costed by the estimator ({workload})"
    # The estimator's "fits" also weighs host RAM (offload, loading): name which one is short.
    short_of_host_ram = not option.fits and option.per_gpu_bytes <= plan.gpu_memory_bytes
    verdict = "fits" if option.fits else f"{NOT_FITTING} ({'host RAM' if short_of_host_ram else 'GPU memory'})"
    return (
        f"{option.label}: {option.per_gpu_bytes / GIB:.1f} of {plan.gpu_memory_bytes / GIB:.1f} GiB per GPU, "
        f"{verdict} ({workload})"
    )


def _chosen_option(options: tuple[Option, ...], answers: Answers) -> Option | None:
    same = [o for o in options if o.strategy is answers.strategy]
    exact = [
        o
        for o in same
        if (o.offload_optimizer, o.offload_params) == (answers.offload_optimizer, answers.offload_params)
    ]
    return (exact or same or [None])[0]


def _training_settings(answers: Answers) -> list[str]:
    """Settings the training script applies when no DeepSpeed JSON carries them."""
    settings = (
        f"micro-batch {answers.micro_batch}, gradient accumulation {answers.gradient_accumulation}, "
        f"{answers.world_size} process(es): global batch {answers.global_batch}; gradient clipping "
        f"{answers.gradient_clipping:g}" + (" (off)" if answers.gradient_clipping == 0 else "")
    )
    where = "(in the DeepSpeed JSON)" if answers.uses_deepspeed else "(give these to the training script)"
    lines = [f"Training: {settings} {where}"]
    if answers.launcher is Launcher.slurm:
        lines.append(
            f"Multi-node: this file describes one node; the srun command below adds the other "
            f"{answers.num_machines - 1} machine(s), each node's rank and the head node's address"
        )
    return lines


def _hidden_size(model: str | None) -> int | None:
    if not model:
        return None
    from accelwiz.estimate.models import resolve_model

    return resolve_model(model).hidden_size
