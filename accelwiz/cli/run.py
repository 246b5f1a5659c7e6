"""`accelwiz run`: check the config, summarise it, then start the real `accelerate launch`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console

from accelwiz.trainer.options import more_flags

# The built-in trainer's flags that `run` declares itself; its others are listed in the epilog (more_flags).
_DECLARED = {"--steps", "--micro-batch", "--seq-len", "--gradient-accumulation", "--method", "--lr", "--output-dir",
             "--resume", "--data", "--model"}

EPILOG = """\
Examples:

  $ accelwiz init --model tiny --defaults && accelwiz run   # a toy model here
  $ accelwiz run --explain --dry-run        # every value and its source; the
                                            # exact command; start nothing
  $ accelwiz run --config ds_zero2.yaml --steps 200 --model Qwen/Qwen2.5-0.5B
  $ accelwiz run --save-every 50 --keep-checkpoints 3   # more trainer flags
  $ accelwiz run train.py -- --lr 3e-4      # your script; its flags after --
  $ accelwiz run --threads-per-process 4    # CPU threads per process
  $ accelwiz run --config 2x8.yaml --slurm job.sbatch train.py
  $ sbatch job.sbatch

A rank that stays stopped (SIGSTOP, a debugger) ends the job after
ACCELWIZ_STALL_TIMEOUT seconds (default 300, 0 = off) with exit 124, instead
of hanging until NCCL's timeout. Otherwise the first failing rank's exit code
is run's; Ctrl-C ends with 130.

The built-in trainer's other flags (given to run as they are, or after `--`;
`accelwiz run -- --help` prints the trainer's own help):
""" + more_flags(_DECLARED)

_TRAINER = "Built-in trainer (when no SCRIPT is given)"
_MULTI = "Multi-node"


def run(
    ctx: typer.Context,
    script: Annotated[
        Path | None,
        typer.Argument(
            help="Training script (default: accelwiz's built-in trainer). Its own flags go after `--`.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="Accelerate config (default: accelerate.yaml, as `accelwiz init` writes).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Launch even when the check finds errors.")] = False,
    explain: Annotated[
        bool,
        typer.Option(help="Print the table of effective values and their sources first, even before a refusal "
                     "(without it, the table follows a preflight that passed)."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option(help="Print the environment changes and the exact command; start nothing.")
    ] = False,
    slurm: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            rich_help_panel=_MULTI,
            help=("Write an sbatch script that runs one `accelerate launch` per node; start nothing."),
        ),
    ] = None,
    print_node_commands: Annotated[
        bool,
        typer.Option(
            rich_help_panel=_MULTI,
            help=("Print each node's `accelerate launch` line (for clusters without a scheduler); start nothing."),
        ),
    ] = False,
    preflight: Annotated[
        bool,
        typer.Option(
            rich_help_panel=_MULTI,
            help="Run `accelwiz doctor` on every node before training (versions, GPUs, interfaces, port, shared "
            "folders, a test all-reduce); the plan's launcher.preflight: false turns it off too.",
        ),
    ] = True,
    threads_per_process: Annotated[
        int | None,
        typer.Option(metavar="N", help="CPU threads of each training process (default: this machine's cores / "
                     "processes per machine; on other machines, theirs). Used where the processes train on CPUs."),
    ] = None,
    steps: Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Optimizer steps.")] = None,
    micro_batch: Annotated[
        int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Sequences per process (default: the plan's).")
    ] = None,
    seq_len: Annotated[
        int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Tokens per sequence (default: the plan's).")
    ] = None,
    gradient_accumulation: Annotated[
        int | None,
        typer.Option(min=1, rich_help_panel=_TRAINER, help="Micro-batches per optimizer step (default: the plan's)."),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            rich_help_panel=_TRAINER, metavar="full|lora|qlora", help="Fine-tuning method (default: the plan's)."
        ),
    ] = None,
    lr: Annotated[float | None, typer.Option(rich_help_panel=_TRAINER, help="Peak learning rate.")] = None,
    output_dir: Annotated[
        Path | None,
        typer.Option(rich_help_panel=_TRAINER, help=("Checkpoints and run_report.json (default: accelwiz-run).")),
    ] = None,
    resume: Annotated[
        bool, typer.Option(rich_help_panel=_TRAINER, help=("Continue from the newest checkpoint in --output-dir."))
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option(
            rich_help_panel=_TRAINER,
            help="A text file, JSONL (`text` or chat `messages` per line) or a `datasets` save_to_disk directory "
            "(default: the bundled public-domain corpus).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            rich_help_panel=_TRAINER,
            help="A checkpoint directory, a hub id, a model preset (its hub weights), a config.json (a random "
            "initialisation) or a toy model (tiny, small, medium) (default: the plan's model; none: refused).",
        ),
    ] = None,
) -> None:
    """Check the config, show what will run, then start `accelerate launch` (exit code passed through)."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.launch.run_plan import TrainerFlags, plan_run

        trainer = TrainerFlags(
            steps=steps,
            micro_batch=micro_batch,
            seq_len=seq_len,
            lr=lr,
            output_dir=output_dir,
            resume=resume,
            data=data,
            model=model,
            gradient_accumulation=gradient_accumulation,
            method=method,
        )
        plan = plan_run(
            console,
            config=config,
            script=script,
            script_args=list(ctx.args),
            trainer=trainer,
            force=force,
            here=plan_here(slurm, print_node_commands),
            mode="slurm" if slurm is not None else "nodes" if print_node_commands else "here",
            explain=explain,
            threads_per_process=threads_per_process,
        )
        if slurm is not None:
            plan.write_sbatch(console, slurm, preflight=preflight)
            return
        if print_node_commands:
            for line in plan.node_commands(console, preflight=preflight):
                console.data(line)
            return
        if dry_run:
            console.data(plan.as_shell())
            return
        code = plan.execute(console)
    raise typer.Exit(code)


def plan_here(slurm: Path | None, print_node_commands: bool) -> bool:
    return slurm is None and not print_node_commands
