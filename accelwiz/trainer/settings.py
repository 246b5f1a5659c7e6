"""The built-in trainer's run: `accelwiz.resolution.run.resolve_run` with the trainer's own flags.

No torch here: `accelwiz run` resolves the same run before launching, to refuse bad input with one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.resolution.run import Run, resolve_run
from accelwiz.trainer.options import TrainerOptions


def resolve_settings(opts: TrainerOptions, environ: Mapping[str, str] | None = None) -> Run:
    """The run the trainer's options describe (`--config`, `--model` and the workload flags)."""
    return resolve_run(opts.config, model=opts.model, flags=trainer_flags(opts), environ=environ)


def trainer_flags(opts: TrainerOptions) -> dict[str, Any]:
    """The trainer's own workload and post-training flags, by the resolution's names (None: not given)."""
    return {"micro_batch": opts.micro_batch, "gradient_accumulation": opts.gradient_accumulation,
            "seq_len": opts.seq_len, "gradient_checkpointing": opts.gradient_checkpointing, "method": opts.method,
            "lora_rank": opts.lora_rank, "lora_alpha": opts.lora_alpha, "lora_targets": opts.lora_targets,
            "lora_dropout": opts.lora_dropout,
            "kind": opts.kind, "reward": opts.reward, "num_generations": opts.num_generations,
            "max_prompt_length": opts.max_prompt_length, "max_completion_length": opts.max_completion_length,
            "beta": opts.beta}
