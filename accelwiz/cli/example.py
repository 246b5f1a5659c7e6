"""`accelwiz example DIR`: a tiny pretrained checkpoint and sample data, for the worked examples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console

EPILOG = """Example:

  accelwiz example demo && cd demo

  accelwiz init --model ./ckpt --kind dpo --defaults && \\
    accelwiz run --data prefs.jsonl --steps 4

A folder an earlier call completed is reused as it is."""


def example(
    folder: Annotated[Path, typer.Argument(help="The folder to create (a new one, or one made by this command).")]
    = Path("accelwiz-example"),
) -> None:
    """Make a tiny pretrained checkpoint (`ckpt/`), DPO pairs (`prefs.jsonl`), GRPO prompts (`prompts.jsonl`) and a
    reward (`rewards.py`), so the worked examples in README and docs/ run as written, offline."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.samples import make_example

        _quiet_libraries()
        made = make_example(folder)
        verb = "reused" if made.reused else "wrote"
        console.info(f"{verb} {folder}: ckpt/ (2-layer Llama and tokenizer), prefs.jsonl, prompts.jsonl, rewards.py")
        console.info(f"next: cd {folder} && accelwiz init --model ./ckpt --kind dpo --defaults")


def _quiet_libraries() -> None:
    """Only this command's two lines: DeepSpeed, which transformers imports on the way, warns on a machine without
    a GPU that it "was unable to detect" one (saving a checkpoint needs no accelerator: say CPU), and the
    checkpoint's save draws a progress bar for its one shard."""
    import os

    import torch
    from transformers.utils import logging

    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    logging.disable_progress_bar()
