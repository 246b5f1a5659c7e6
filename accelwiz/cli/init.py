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

  $ accelwiz init                                   # ask, with defaults from this machine
  $ accelwiz init --defaults -o accelerate.yaml     # no questions: a config that works here
  $ accelwiz init --system 8xH100-80GB --model llama-3-8b --defaults --dry-run
  $ accelwiz init --answers answers.yaml            # keys = question keys (see --help of each)
  $ accelwiz init --list-templates
  $ accelwiz init --template zero3-offload -o accelerate.yaml

Answer keys: system, model, regime, lora_rank, seq_len, micro_batch, gradient_checkpointing,
num_machines, gpus, strategy, offload_optimizer, offload_params, precision, use_global_batch,
target_global_batch (sets the accumulation: global / (micro-batch x processes)), gradient_accumulation,
gradient_clipping, torch_compile, zero3_init, launcher, machine_rank, main_process_ip, main_process_port,
rdzv_backend.
Nothing is written unless both files pass `accelwiz check`; an existing file is replaced only with
--force (or a yes), keeping a .bak. Ctrl-C at any question exits 130 with nothing written.
"""


def init(
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Where to write the Accelerate YAML (a DeepSpeed JSON goes beside it as ds_config.json).",
        ),
    ] = DEFAULT_CONFIG,
    system: SystemOption = None,
    model: Annotated[
        str | None, typer.Option(help="Model preset, config.json or parameter count (7B).")
    ] = None,
    strategy: Annotated[str | None, typer.Option(help="single, ddp, fsdp, zero1, zero2 or zero3.")] = None,
    precision: Annotated[str | None, typer.Option(help="bf16, fp16, fp8 or no.")] = None,
    gpus: Annotated[int | None, typer.Option(min=0, help="GPUs per machine.")] = None,
    answers: Annotated[
        Path | None, typer.Option("--answers", metavar="FILE", help="YAML of answers (question key: value).")
    ] = None,
    defaults: Annotated[bool, typer.Option("--defaults", help="Accept every default; ask nothing.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the files instead of writing them.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace existing files (keeping .bak copies).")
    ] = False,
    template: Annotated[
        str | None, typer.Option(metavar="NAME", help="Copy a ready config instead of asking.")
    ] = None,
    list_templates: Annotated[bool, typer.Option("--list-templates", help="List the ready configs.")] = False,
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
        request = InitRequest(
            output=output,
            answers_file=answers,
            defaults=defaults,
            dry_run=dry_run,
            force=force,
            options={
                "system": system,
                "model": model,
                "strategy": strategy,
                "precision": precision,
                "gpus": gpus,
            },
            command=shlex.join(["accelwiz", "init", *sys.argv[2:]])
            if Path(sys.argv[0]).name == "accelwiz"
            else "accelwiz init",
        )
        if template is not None:
            copy_template(template, request, console)
        else:
            run_init(request, console)
