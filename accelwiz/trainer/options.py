"""The built-in trainer's options: parsed by `train.py`, forwarded from `accelwiz run --steps ...`.

No torch here: `accelwiz run` imports this module to turn its own flags into the trainer's argv.

The workload options (micro-batch, accumulation, sequence length, checkpointing, fine-tuning method) default to
None, "not given": the trainer then takes them from the plan beside `--config`, else from the DeepSpeed JSON,
else its own defaults (`settings.py` decides, and says which source each value came from).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from accelwiz.vocab import TRAINING_KINDS

DEFAULT_OUTPUT_DIR = Path("accelwiz-run")
METHODS = ("full", "lora", "qlora")
KINDS = TRAINING_KINDS  # sft: the built-in loop; dpo, grpo: TRL's trainers (trl_run.py); the list: accelwiz/vocab.py


@dataclass(frozen=True)
class TrainerOptions:
    steps: int = 30
    micro_batch: int | None = None
    seq_len: int | None = None
    lr: float = 3e-3
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    output_dir: Path = DEFAULT_OUTPUT_DIR
    save_every: int = 0  # 0 = only at the end
    keep_checkpoints: int = 2
    resume: bool = False
    data: Path | None = None
    model: str | None = None
    seed: int = 0
    gradient_accumulation: int | None = None
    gradient_checkpointing: bool | None = None
    method: str | None = None
    lora_rank: int | None = None
    lora_alpha: int | None = None
    lora_dropout: float | None = None
    lora_targets: str | None = None  # comma-separated module names, or all-linear
    config: Path | None = None  # the Accelerate YAML: its plan and DeepSpeed JSON supply the workload
    # DPO/GRPO (None, "not given": the plan's, else resolution.posttraining's defaults, TRL's own)
    kind: str | None = None
    reward: str | None = None  # GRPO: FILE.py:FUNCTION
    num_generations: int | None = None
    max_prompt_length: int | None = None
    max_completion_length: int | None = None
    beta: float | None = None

    def to_argv(self) -> list[str]:
        """The argv `train.py` parses back into these options (only values that differ from the defaults)."""
        argv: list[str] = []
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value == default:
                continue
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                argv.append(flag if value else "--no-" + flag[2:])
            else:
                argv += [flag, str(value)]
        return argv


_DEFAULTS = {name: getattr(TrainerOptions(), name) for name in TrainerOptions.__dataclass_fields__}


def parse_args(argv: list[str] | None = None) -> TrainerOptions:
    """Parse the trainer's own command line (what `accelerate launch` hands to `train.py`)."""
    args = build_parser().parse_args(argv)
    return TrainerOptions(**{name: getattr(args, name) for name in _DEFAULTS})


def more_flags(shown: set[str], width: int = 76) -> str:
    """The trainer's flags that `accelwiz run` does not declare (it passes them on: `run --save-every 5`), one
    line each with its help, for run's `--help`: so that every flag the built-in trainer takes is listed there."""
    import textwrap

    lines = []
    for action in build_parser()._actions:  # argparse keeps its actions here; there is no public accessor
        flag = next((o for o in action.option_strings if o.startswith("--")), None)
        if flag is None or flag in shown or action.help == argparse.SUPPRESS or flag in ("--help", "--config"):
            continue
        name = flag if action.nargs == 0 else f"{flag} {_metavar(action)}"
        if isinstance(action, argparse.BooleanOptionalAction):
            name = f"{flag} / --no-{flag[2:]}"
        text = textwrap.fill(f"{name}: {action.help or ''}".rstrip(": "), width, subsequent_indent="    ",
                             break_on_hyphens=False)
        lines.append(f"  {text}")
    return "\n".join(lines)


def _metavar(action: argparse.Action) -> str:
    if action.metavar:
        return str(action.metavar)
    if action.choices:
        return "|".join(action.choices)
    return {float: "X", int: "N", _positive: "N", _probability: "P", Path: "PATH"}.get(action.type, "TEXT")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="accelwiz-trainer", description="accelwiz's built-in causal-LM trainer.")
    defaults = TrainerOptions()
    _workload_flags(parser, defaults)
    _optimizer_flags(parser, defaults)
    _output_flags(parser, defaults)
    _input_flags(parser, defaults)
    _post_training_flags(parser, defaults)
    return parser


def _workload_flags(parser: argparse.ArgumentParser, defaults: TrainerOptions) -> None:
    """Steps, batch, sequence, checkpointing and the fine-tuning method: the plan's unless given."""
    planned = " (default: the plan, else the DeepSpeed JSON, else %s)"
    parser.add_argument("--steps", type=_positive, default=defaults.steps, help="Optimizer steps in total.")
    parser.add_argument("--micro-batch", type=_positive, help="Sequences per process." + planned % 1)
    parser.add_argument(
        "--gradient-accumulation", type=_positive, help="Micro-batches per optimizer step." + planned % 1
    )
    parser.add_argument("--seq-len", type=_positive,
                        help="Tokens per sequence." + planned % "2048, or the model's positions when fewer")
    parser.add_argument(
        "--gradient-checkpointing",
        action=argparse.BooleanOptionalAction,
        help="Recompute activations in the backward pass (default: the plan, else off).",
    )
    parser.add_argument("--method", choices=METHODS, help="Fine-tuning method (default: the plan, else full).")
    parser.add_argument("--lora-rank", type=_positive, help="LoRA rank (default: the plan, else 16).")
    parser.add_argument("--lora-alpha", type=_positive, help="LoRA alpha (default: the plan, else 2 x rank).")
    parser.add_argument("--lora-dropout", type=_probability,
                        help="PEFT's lora_dropout, 0 <= p < 1 (default: the plan, else 0.0, PEFT's).")
    parser.add_argument(
        "--lora-targets",
        metavar="NAMES",
        help="Comma-separated module names LoRA adapts, or all-linear (PEFT's every linear layer but the output "
        "head) (default: the plan, else the attention projections).",
    )


def _optimizer_flags(parser: argparse.ArgumentParser, defaults: TrainerOptions) -> None:
    """The learning-rate schedule and clipping."""
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


def _output_flags(parser: argparse.ArgumentParser, defaults: TrainerOptions) -> None:
    """Where checkpoints and the run report go, how many are kept, and resuming."""
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


def _input_flags(parser: argparse.ArgumentParser, defaults: TrainerOptions) -> None:
    """The data, the model, the seed and the Accelerate YAML launched."""
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="A text file, a JSONL file (`text` or chat `messages` per line) or a `datasets` save_to_disk "
        "directory (default: the bundled corpus).",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="A checkpoint directory, a hub id, a model preset (its hub weights), a config.json (a random "
        "initialisation) or a toy model (tiny, small, medium) (default: the plan's model; none: refused).",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed, help=f"Random seed (default {defaults.seed}).")
    parser.add_argument(
        "--config", type=Path, default=None, help="The Accelerate YAML launched (`accelwiz run` passes it)."
    )


def _post_training_flags(parser: argparse.ArgumentParser, defaults: TrainerOptions) -> None:
    group = parser.add_argument_group("post-training (TRL's DPOTrainer and GRPOTrainer)")
    group.add_argument("--kind", choices=KINDS, default=defaults.kind,
                       help="sft: the built-in loop; dpo: --data has prompt, chosen, rejected; grpo: --data has "
                            "prompt, and --reward scores the completions (default: the plan's, else sft).")
    group.add_argument("--reward", metavar="FILE.py:FUNCTION",
                       help="GRPO: the reward function, with TRL's signature (completions, **kwargs).")
    group.add_argument("--num-generations", type=_positive, default=defaults.num_generations,
                       help="GRPO: completions per prompt.")
    group.add_argument("--max-prompt-length", type=_positive, default=defaults.max_prompt_length,
                       help="Prompt tokens (default: the plan's, else 512).")
    group.add_argument("--max-completion-length", type=_positive, default=defaults.max_completion_length,
                       help="Completion tokens (default: the plan's, else 512).")
    group.add_argument("--beta", type=float, default=None, help="KL coefficient (default: TRL's, DPO 0.1, GRPO 0).")


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1 (got {value})")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value
