"""`run SCRIPT -- ARGS`: whether SCRIPT trains with the HF Trainer (or TRL's trainers), and then its arguments,
read as the script's parser reads them (a TRL-style `--config recipe.yaml` included)."""

from __future__ import annotations

import re
from pathlib import Path

from accelwiz.config.training_args import TrainerArguments, load_training_arguments, parse_argv
from accelwiz.config.trl_arguments import with_trl_defaults

# What a script that trains with the HF Trainer (or TRL's trainers) contains.
_TRAINER_MARKERS = ("TrainingArguments", "Seq2SeqTrainingArguments", "HfArgumentParser", "TrlParser", "SFTConfig",
                    "DPOConfig", "GRPOConfig", "Trainer(")


def trainer_arguments_for_script(script: Path, argv: list[str]) -> TrainerArguments | None:
    """The Trainer arguments of `run SCRIPT -- ARGS`, when SCRIPT is a Trainer script; None otherwise.

    A TRL-style `--config recipe.yaml` (TrlParser) is read as the arguments file, the rest of the line over it."""
    from accelwiz.document.read import read_bytes
    from accelwiz.errors import InputError

    try:  # bounded, a regular file: a FIFO never blocks, a 7 GiB script is not read whole (issue 32)
        source = read_bytes(script, what="a training script", max_bytes=16 * 1024 * 1024).decode("utf-8", "replace")
    except InputError:
        return None
    if not any(marker in source for marker in _TRAINER_MARKERS):
        return None
    file: Path | None = None
    rest = list(argv)
    for position, token in enumerate(argv):
        option, has_inline, inline = token.partition("=")
        if option == "--config" and "TrlParser" in source:
            value = inline if has_inline else (argv[position + 1] if position + 1 < len(argv) else "")
            if value and Path(value).suffix.lower() in (".yaml", ".yml", ".json") and Path(value).is_file():
                file = Path(value)
                rest = argv[:position] + argv[position + (1 if has_inline else 2):]
            break
    arguments = load_training_arguments(file, rest) or parse_argv([])
    if re.search(r"^\s*(from trl\b|import trl\b)", source, re.M) or "TrlParser" in source:
        return with_trl_defaults(arguments, sft="SFTConfig" in source)
    return arguments
