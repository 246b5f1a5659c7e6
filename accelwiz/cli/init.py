"""`accelwiz init`: the wizard that writes an Accelerate YAML (and its DeepSpeed JSON) that pass `check`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import SystemOption, exit_on_error, get_console
from accelwiz.defaults import DEFAULT_CONFIG

EPILOG = """\
Examples:

  $ accelwiz init                          # ask; defaults from this machine
  $ accelwiz init --defaults               # no questions: a config for here
  $ accelwiz init --model tiny --defaults && accelwiz run   # train, here
  $ accelwiz init --system 8xH100-80GB --model llama-3-8b --defaults --dry-run
  $ accelwiz init --system 2x8xA100-80GB --model llama-3.1-70b \\
      --for trainer --defaults -o zero3.yaml
  $ accelwiz init --answers answers.yaml   # `key: value` lines, keys below
  $ accelwiz init --list-templates
  $ accelwiz init --template zero3-offload -o accelerate.yaml

Answer keys (--answers FILE; `_` and `-` are the same in values):
  system: local | a preset | NxGPU / MxNxGPU (2x8xH100-80GB) | profile.json
  model: a preset, config.json, checkpoint folder, hub id or count (7B);
    empty: no estimate
  kind: sft|dpo|grpo (--kind)   with dpo|grpo: max_prompt_length: N
    max_completion_length: N   beta: X >= 0 (DPO 0.1, GRPO 0.0)
  on GPUs: generation: hf|vllm-colocate|vllm-server   vllm_anyway: true|false
  num_generations: N >= 2 dividing micro_batch x processes x accumulation
  reward: FILE.py:FUNCTION (--reward)
  regime: full|lora|qlora (--method)   lora_rank: N >= 1
  seq_len: 1..the model's positions (sft)   micro_batch: N >= 1
  owner: accelerate|trainer (--for)   gradient_checkpointing: true|false
  num_machines: N >= 1 (--machines)   gpus: 1..GPUs per machine
  processes: N >= 1, CPU processes per machine without GPUs (--processes)
  strategy: single|ddp|zero1|zero2|zero3|fsdp_full|fsdp_grad_op|fsdp_hybrid
  offload_optimizer: true|false   offload_params: true|false
  offload_device: cpu|nvme   nvme_path: PATH
  precision: no|fp16|bf16|fp8   use_global_batch: true|false
  target_global_batch: N, a multiple of micro_batch x processes (sets the
    accumulation)
  gradient_accumulation: N >= 1   gradient_clipping: X >= 0 (0 = off)
  torch_compile: true|false   zero3_init: true|false
  launcher: node-commands|slurm   machine_rank: 0..num_machines-1
  main_process_ip: TEXT   main_process_port: 1..65535
  rdzv_backend: c10d|static

init writes the YAML, the DeepSpeed JSON (NAME.ds.json beside NAME.yaml, or
--ds-output) and the plan (NAME.plan.yaml), only if they pass `accelwiz
check`. When the fine-tuning does not fit, it picks the fastest that does (CPU
offload, NVMe offload, LoRA, QLoRA, a shorter sequence) and says why. On a
terminal: `<` goes back one question, and a review screen comes before
writing. Files already there that are byte for byte what init would write are
kept (the quickstart pasted twice goes on); different ones are replaced only
with --force (or a yes), keeping .bak copies. Ctrl-C at any question exits 130
with nothing written.
"""


OutputOption = Annotated[
    Path,
    typer.Option(
        "--output",
        "-o",
        help="Where to write the Accelerate YAML (the DeepSpeed JSON goes beside it as NAME.ds.json, the plan as "
        "NAME.plan.yaml).",
    ),
]
DsOutputOption = Annotated[
    Path | None, typer.Option("--ds-output", metavar="FILE", help="Where to write the DeepSpeed JSON.")
]
ModelOption = Annotated[
    str | None, typer.Option(help="A preset (llama-8b; `accelwiz estimate --list-models`), a hub id "
                             "(Qwen/Qwen2.5-7B), a local checkpoint folder or config.json, or a parameter "
                             "count (7B).")
]
StrategyOption = Annotated[
    str | None, typer.Option(help="single, ddp, zero1, zero2, zero3, fsdp_full, fsdp_grad_op or fsdp_hybrid "
                             "(several machines).")
]
PrecisionOption = Annotated[str | None, typer.Option(help="bf16, fp16, fp8 or no.")]
GpusOption = Annotated[int | None, typer.Option(min=0, help="GPUs per machine.")]
MachinesOption = Annotated[int | None, typer.Option(min=1, help="Machines (nodes) training together.")]
ProcessesOption = Annotated[int | None, typer.Option(
    min=1, help="Processes per machine on a machine without GPUs (CPU DDP on gloo).")]
MethodOption = Annotated[str | None, typer.Option(metavar="full|lora|qlora", help="Fine-tuning method.")]
KindOption = Annotated[str | None, typer.Option(
    metavar="sft|dpo|grpo", help="What trains: supervised fine-tuning, or DPO / GRPO through TRL.")]
RewardOption = Annotated[str | None, typer.Option(
    metavar="FILE.py:FUNCTION", help="GRPO's reward function (checked without running it).")]
OwnerOption = Annotated[
    str | None,
    typer.Option("--for", metavar="accelerate|trainer",
                 help="Who owns micro-batch, accumulation, precision and clipping: the files (accelerate), or "
                 "the HF Trainer / TRL (trainer: the JSON says \"auto\" and init prints the TrainingArguments)."),
]
AnswersOption = Annotated[
    Path | None, typer.Option("--answers", metavar="FILE", help="YAML of answers (question key: value).")
]
DefaultsOption = Annotated[bool, typer.Option("--defaults", help="Accept every default; ask nothing.")]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the files instead of writing them.")]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace existing files (keeping .bak copies).")]
TemplateOption = Annotated[str | None, typer.Option(metavar="NAME", help="Copy a ready config instead of asking.")]
ListTemplatesOption = Annotated[bool, typer.Option("--list-templates", help="List the ready configs.")]


def init(
    output: OutputOption = DEFAULT_CONFIG,
    ds_output: DsOutputOption = None,
    system: SystemOption = None,
    model: ModelOption = None,
    strategy: StrategyOption = None,
    precision: PrecisionOption = None,
    gpus: GpusOption = None, machines: MachinesOption = None,
    processes: ProcessesOption = None,
    method: MethodOption = None, kind: KindOption = None,
    reward: RewardOption = None,
    owner: OwnerOption = None,
    answers: AnswersOption = None,
    defaults: DefaultsOption = False, dry_run: DryRunOption = False,
    force: ForceOption = False, template: TemplateOption = None,
    list_templates: ListTemplatesOption = False,
) -> None:
    """Write an Accelerate config (and DeepSpeed JSON) for this machine and model, checked before writing."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.wizard.session import InitRequest, copy_template, run_init

        if list_templates:
            from accelwiz.wizard.templates import list_templates as all_templates

            for found in all_templates():
                console.data(f"{found.name:<18} {found.description}")
            return
        # the options by the answer keys they give (`--method` is `regime`, `--for` is `owner`)
        options = {"system": system, "model": model, "strategy": strategy, "precision": precision, "gpus": gpus,
                   "num_machines": machines, "processes": processes, "regime": method, "owner": owner,
                   "kind": kind, "reward": reward}
        request = InitRequest(output=output, answers_file=answers, defaults=defaults, dry_run=dry_run, force=force,
                              options=options, deepspeed_output=ds_output, command=_command())
        if template is not None:
            copy_template(template, request, console)
        else:
            run_init(request, console)


def _command() -> str:
    """The command as typed, for the header of the files init writes (`accelwiz init` when not run as accelwiz)."""
    if Path(sys.argv[0]).name == "accelwiz":
        return shlex.join(["accelwiz", "init", *sys.argv[2:]])
    return "accelwiz init"
