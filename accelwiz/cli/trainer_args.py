"""The HF Trainer's arguments on `check`'s command line: `--training-args FILE` and everything after `--`.

Kept apart from cli/check.py so that the command itself only gains two parameters and one call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.console import Console

TRAINER_ARGV = "accelwiz.trainer_argv"

TrainingArgsOption = Annotated[
    Path | None,
    typer.Option("--training-args", metavar="FILE", show_default=False, rich_help_panel="HF Trainer",
                 help="The HF Trainer / TRL arguments file (JSON or YAML) the run uses: turns on the AW7xx rules. "
                      "The training command line may follow `--` instead (or as well; it wins)."),
]


TrlOption = Annotated[
    bool,
    typer.Option("--trl", rich_help_panel="HF Trainer",
                 help="The arguments are a TRL config's (SFTConfig, DPOConfig, ...): bf16 defaults to on unless fp16 "
                      "is given, gradient checkpointing to on, SFT's learning rate to 2e-05."),
]


NumProcessesOption = Annotated[
    int | None,
    typer.Option("--num-processes", min=1, metavar="N", show_default=False, rich_help_panel="Launch",
                 help="The processes the run starts (accelerate launch --num_processes, torchrun --nproc_per_node x "
                      "--nnodes, deepspeed --num_gpus x nodes): wins over the YAML's num_processes, as the "
                      "launcher's flag does; the world size of a lone DeepSpeed JSON's train_batch_size."),
]


class SplitAtDoubleDash(TyperCommand):
    """A command whose arguments after the first `--` are the training script's, kept in `ctx.meta`.

    click would otherwise pass them on as more FILES."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta[TRAINER_ARGV] = args[at + 1:]
            args = args[:at]
        return super().parse_args(ctx, args)


def trainer_argv(ctx: typer.Context) -> list[str]:
    return list(ctx.meta.get(TRAINER_ARGV, []))


def trainer_inputs(file: Path | None, argv: list[str], files: list[Path], console: Console | None = None, *,
                   trl: bool = False, num_processes: int | None = None) -> tuple[TrainerArguments | None, list[Path]]:
    """The Trainer arguments, and the files to check: the JSON `--deepspeed` names joins them when no DeepSpeed
    JSON was given and the YAMLs name none (so the DeepSpeed rules check the file the Trainer reads).
    `num_processes` (check's --num-processes) is the world the Trainer runs in."""
    if file is None and not argv and not trl:
        # no Trainer arguments: `check` need not import their parser; --num-processes alone is the launch's count,
        # which check joins with the files (accelwiz/effective_flags.py)
        return None, files
    from accelwiz.config.training_args import load_training_arguments, parse_argv
    from accelwiz.config.trl_arguments import with_trl_defaults

    arguments = load_training_arguments(file, argv)
    if arguments is None and trl:
        arguments = parse_argv([])  # TRL's defaults alone already say something (bf16 on)
    if arguments is None:
        return None, files
    if trl:
        arguments = with_trl_defaults(arguments, sft=True)
    if num_processes is not None:
        from dataclasses import replace

        arguments = replace(arguments, world_size=num_processes)
    if console is not None:
        for note in arguments.notes:
            console.info(f"note: Trainer arguments ({arguments.source}): {note}")
    from accelwiz.rules.trainer_view import deepspeed_argument_path

    named = deepspeed_argument_path(arguments)
    if named is None or not named.is_file() or any(_same(named, f) for f in files):
        return arguments, files
    if any(f.suffix.lower() == ".json" for f in files) or any(_names_deepspeed_file(f) for f in files):
        return arguments, files
    return arguments, [*files, named]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def _names_deepspeed_file(path: Path) -> bool:
    if path.suffix.lower() not in (".yaml", ".yml"):
        return False
    from accelwiz.document import load_document
    from accelwiz.effective import named_deepspeed_file
    from accelwiz.errors import InputError

    try:
        return named_deepspeed_file(load_document(path)) is not None
    except InputError:  # an unreadable YAML is reported by check itself
        return False
