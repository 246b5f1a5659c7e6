"""Generate templates/ with the wizard's own builder, so templates and `accelwiz init` can never disagree.

Run `python scripts/make_templates.py` after changing the builder; tests/test_template_generation.py fails
while templates/ differs from what this produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from accelwiz.plan_file import dump_plan
from accelwiz.probe.model import HostInfo, MachineProfile
from accelwiz.probe.profiles import load_system
from accelwiz.wizard.answers import Launcher, StrategyChoice
from accelwiz.wizard.build import build, launch_commands
from accelwiz.wizard.flow import validate
from accelwiz.wizard.generate import build_plan_file
from accelwiz.wizard.render import describe_hardware, render_json, render_yaml

# A multi-node template names no head-node address: any address written here would be a made-up one (a
# documentation address makes every node wait for a machine that does not exist). The launcher gives each node
# machine 0's address, as for `accelwiz init`'s own multi-node files, and the template's plan
# (NAME.plan.yaml, copied with it) says which launcher, so `check` judges the files as they will be launched.
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
# A fixed CPU machine, so the CPU template does not depend on the machine that generates it.
CPU_ONLY = MachineProfile(source="preset", name="cpu", host=HostInfo(memory_total_bytes=16 * 2**30,
                                                                      cpu_physical_cores=8, cpu_logical_cores=16))

# name, one-line description, machine (a preset name or a profile), answers beyond the machine's defaults
SPECS: list[tuple[str, str, str | MachineProfile, dict[str, Any]]] = [
    ("cpu-single", "one process on the CPU, full precision (no GPU needed)", CPU_ONLY, {}),
    ("single-gpu", "one GPU, bf16 (fp16 on pre-Ampere GPUs: change mixed_precision)", "1xL4", {"precision": "bf16"}),
    ("ddp", "data parallel on 8 GPUs of one machine, bf16", "8xH100-80GB", {"strategy": StrategyChoice.ddp}),
    ("fsdp2", "FSDP2 full sharding on 8 GPUs, bf16, transformer-block wrapping", "8xH100-80GB",
     {"strategy": StrategyChoice.fsdp_full}),
    ("zero2", "DeepSpeed ZeRO-2 on 8 GPUs, bf16", "8xH100-80GB", {"strategy": StrategyChoice.zero2}),
    ("zero3", "DeepSpeed ZeRO-3 on 8 GPUs, bf16, zero.Init", "8xH100-80GB",
     {"strategy": StrategyChoice.zero3, "zero3_init": True}),
    ("zero3-offload", "DeepSpeed ZeRO-3 on 8 GPUs with optimizer and parameters offloaded to CPU", "8xH100-80GB",
     {"strategy": StrategyChoice.zero3, "zero3_init": True, "offload_optimizer": True, "offload_params": True}),
    ("zero2-offload-1gpu", "DeepSpeed ZeRO-2 on one GPU with the optimizer offloaded to CPU", "1xRTX4090",
     {"strategy": StrategyChoice.zero2, "offload_optimizer": True}),
    ("multinode-zero3", "DeepSpeed ZeRO-3 on 2 machines x 8 GPUs, started by SLURM", "2x8xH100",
     {"strategy": StrategyChoice.zero3, "zero3_init": True, "num_machines": 2, "launcher": Launcher.slurm,
      "rdzv_backend": "c10d"}),
]


def render_template(name: str, description: str, machine: str | MachineProfile,
                    extra: dict[str, Any]) -> dict[str, str]:
    """File name -> text for one template (the YAML, and its JSON for DeepSpeed)."""
    system = load_system(machine) if isinstance(machine, str) else machine
    data = {"gpus": system.gpu_count, "num_machines": system.num_machines, **extra}
    if system.gpus:
        data.setdefault("precision", "bf16")
    answers = validate(data, system)
    pair = build(answers, system, deepspeed_file=f"{name}.json")
    where = " (in the DeepSpeed JSON)" if pair.deepspeed else " (give these to the training script)"
    lines = [
        f"{name}: {description}",
        f"Copy it with: accelwiz init --template {name} -o accelerate.yaml"
        + (" (the JSON is copied to accelerate.ds.json" if pair.deepspeed else "")
        + (", the plan to accelerate.plan.yaml" if answers.num_machines > 1 else "") + (")" if pair.deepspeed else ""),
        f"Written for: {describe_hardware(system)}; on other hardware set num_processes (total over all machines)"
        " and num_machines",
        f"Training: micro-batch {answers.micro_batch}, gradient accumulation {answers.gradient_accumulation}, "
        f"gradient clipping {answers.gradient_clipping:g}{where}",
        "Launch:", *(f"  {command}" for command in launch_commands(answers, "accelerate.yaml")),
    ]
    if answers.num_machines > 1:
        lines.insert(-2, f"Head node: no main_process_ip: the launcher passes machine 0's address to every node "
                         f"(SLURM here); {name}.plan.yaml says so and is copied with the template")
    header = "".join(f"# {line}\n" for line in lines)
    header += "# yaml-language-server: $schema=../schemas/accelerate-config.schema.json\n"
    files = {f"{name}.yaml": header + render_yaml(pair.accelerate, None)}
    if pair.deepspeed:
        files[f"{name}.json"] = render_json(pair.deepspeed)
    if answers.num_machines > 1:
        files[f"{name}.plan.yaml"] = dump_plan(build_plan_file(
            answers, system, machine if isinstance(machine, str) else system.name or "local",
            command="python scripts/make_templates.py", output=Path(f"{name}.yaml"),
            deepspeed=Path(f"{name}.json") if pair.deepspeed else None, option=None, trainer_flags=[]))
    return files


def render_all() -> dict[str, str]:
    return {file: text for spec in SPECS for file, text in render_template(*spec).items()}


if __name__ == "__main__":
    for file, text in render_all().items():
        (TEMPLATES / file).write_text(text)
        print(f"wrote templates/{file}")
