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


ScriptArgument = Annotated[
    Path | None,
    typer.Argument(
        help="Training script (default: accelwiz's built-in trainer). Its own flags go after `--`.",
        show_default=False,
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="Accelerate config (default: accelerate.yaml, as `accelwiz init` writes).",
        show_default=False,
    ),
]
ForceOption = Annotated[bool, typer.Option(help="Launch even when the check finds errors.")]
ExplainOption = Annotated[
    bool,
    typer.Option(help="Print the table of effective values and their sources first, even before a refusal "
                 "(without it, the table follows a preflight that passed)."),
]
DryRunOption = Annotated[bool, typer.Option(help="Print the environment changes and the exact command; start nothing.")]
SlurmOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        rich_help_panel=_MULTI,
        help=("Write an sbatch script that runs one `accelerate launch` per node; start nothing."),
    ),
]
PrintNodeCommandsOption = Annotated[
    bool,
    typer.Option(
        rich_help_panel=_MULTI,
        help=("Print each node's `accelerate launch` line (for clusters without a scheduler); start nothing."),
    ),
]
PreflightOption = Annotated[
    bool,
    typer.Option(
        rich_help_panel=_MULTI,
        help="Run `accelwiz doctor` on every node before training (versions, GPUs, interfaces, port, shared "
        "folders, a test all-reduce); the plan's launcher.preflight: false turns it off too.",
    ),
]
ThreadsPerProcessOption = Annotated[
    int | None,
    typer.Option(metavar="N", help="CPU threads of each training process (default: this machine's cores / "
                 "processes per machine; on other machines, theirs). Used where the processes train on CPUs."),
]
StepsOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Optimizer steps.")]
MicroBatchOption = Annotated[
    int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Sequences per process (default: the plan's).")
]
SeqLenOption = Annotated[
    int | None, typer.Option(min=1, rich_help_panel=_TRAINER, help="Tokens per sequence (default: the plan's).")
]
GradientAccumulationOption = Annotated[
    int | None,
    typer.Option(min=1, rich_help_panel=_TRAINER, help="Micro-batches per optimizer step (default: the plan's)."),
]
MethodOption = Annotated[
    str | None,
    typer.Option(
        rich_help_panel=_TRAINER, metavar="full|lora|qlora", help="Fine-tuning method (default: the plan's)."
    ),
]
LrOption = Annotated[float | None, typer.Option(rich_help_panel=_TRAINER, help="Peak learning rate.")]
OutputDirOption = Annotated[
    Path | None,
    typer.Option(rich_help_panel=_TRAINER, help=("Checkpoints and run_report.json (default: accelwiz-run).")),
]
ResumeOption = Annotated[
    bool, typer.Option(rich_help_panel=_TRAINER, help=("Continue from the newest checkpoint in --output-dir."))
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        rich_help_panel=_TRAINER,
        help="A text file, JSONL (`text` or chat `messages` per line) or a `datasets` save_to_disk directory "
        "(default: the bundled public-domain corpus).",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        rich_help_panel=_TRAINER,
        help="A checkpoint directory, a hub id, a model preset (its hub weights), a config.json (a random "
        "initialisation) or a toy model (tiny, small, medium) (default: the plan's model; none: refused).",
    ),
]


def run(
    ctx: typer.Context,
    script: ScriptArgument = None,
    config: ConfigOption = None,
    force: ForceOption = False, explain: ExplainOption = False,
    dry_run: DryRunOption = False,
    slurm: SlurmOption = None,
    print_node_commands: PrintNodeCommandsOption = False,
    preflight: PreflightOption = True,
    threads_per_process: ThreadsPerProcessOption = None,
    steps: StepsOption = None, micro_batch: MicroBatchOption = None,
    seq_len: SeqLenOption = None, gradient_accumulation: GradientAccumulationOption = None,
    method: MethodOption = None,
    lr: LrOption = None,
    output_dir: OutputDirOption = None,
    resume: ResumeOption = False, data: DataOption = None,
    model: ModelOption = None,
) -> None:
    """Check the config, show what will run, then start `accelerate launch` (exit code passed through)."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.launch.run_plan import TrainerFlags
        from accelwiz.launch.run_request import RunRequest, run_for

        trainer = TrainerFlags(steps=steps, micro_batch=micro_batch, seq_len=seq_len, lr=lr, output_dir=output_dir,
                               resume=resume, data=data, model=model, gradient_accumulation=gradient_accumulation,
                               method=method)
        code = run_for(RunRequest(config=config, script=script, script_args=tuple(ctx.args), trainer=trainer,
                                  force=force, explain=explain, dry_run=dry_run, slurm=slurm,
                                  print_node_commands=print_node_commands, preflight=preflight,
                                  threads_per_process=threads_per_process), console)
    raise typer.Exit(code)
