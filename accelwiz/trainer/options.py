"""The built-in trainer's options: parsed by `train.py`, forwarded from `accelwiz run --steps ...`.

No torch here: `accelwiz run` imports this module to turn its own flags into the trainer's argv.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUTPUT_DIR = Path("accelwiz-run")


@dataclass(frozen=True)
class TrainerOptions:
    steps: int = 30
    micro_batch: int = 4
    seq_len: int = 64
    lr: float = 3e-3
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    output_dir: Path = DEFAULT_OUTPUT_DIR
    save_every: int = 0  # 0 = only at the end
    keep_checkpoints: int = 2
    resume: bool = False
    data: Path | None = None
    model: str = "tiny"
    seed: int = 0

    def to_argv(self) -> list[str]:
        """The argv `train.py` parses back into these options (only values that differ from the defaults)."""
        argv: list[str] = []
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value == default:
                continue
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                argv.append(flag)
            else:
                argv += [flag, str(value)]
        return argv


_DEFAULTS = {name: getattr(TrainerOptions(), name) for name in TrainerOptions.__dataclass_fields__}


def parse_args(argv: list[str] | None = None) -> TrainerOptions:
    """Parse the trainer's own command line (what `accelerate launch` hands to `train.py`)."""
    parser = argparse.ArgumentParser(prog="accelwiz-trainer", description="accelwiz's built-in causal-LM trainer.")
    defaults = TrainerOptions()
    parser.add_argument("--steps", type=_positive, default=defaults.steps, help="Optimizer steps in total.")
    parser.add_argument("--micro-batch", type=_positive, default=defaults.micro_batch, help="Sequences per process.")
    parser.add_argument("--seq-len", type=_positive, default=defaults.seq_len, help="Tokens (bytes) per sequence.")
    parser.add_argument("--lr", type=float, default=defaults.lr, help="Peak learning rate.")
    parser.add_argument(
        "--warmup-ratio",
        type=float,
        default=defaults.warmup_ratio,
        help="Fraction of steps with a linear warm-up before the cosine decay.",
    )
    parser.add_argument(
        "--max-grad-norm",
        type=float,
        default=defaults.max_grad_norm,
        help="Gradient clipping norm (0 turns clipping off).",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=defaults.output_dir, help="Checkpoints and run_report.json go here."
    )
    parser.add_argument(
        "--save-every",
        type=int,
        default=defaults.save_every,
        help="Save a checkpoint every N steps (always at the end).",
    )
    parser.add_argument(
        "--keep-checkpoints",
        type=_positive,
        default=defaults.keep_checkpoints,
        help="Keep only the newest N checkpoints.",
    )
    parser.add_argument("--resume", action="store_true", help="Continue from the newest checkpoint in --output-dir.")
    parser.add_argument("--data", type=Path, default=None, help="A UTF-8 text file (default: the bundled corpus).")
    parser.add_argument("--model", default=defaults.model, help="A preset name or a config.json.")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    args = parser.parse_args(argv)
    return TrainerOptions(**{name: getattr(args, name) for name in _DEFAULTS})


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value
