"""Whether a Trainer or TRL run's batches vary in length: what its collator does with samples of different
lengths (the trainer layer's `varying_lengths`, accelwiz/resolution/workload.py). No torch.

TRL 1.16's SFTTrainer without packing (SFTConfig's `packing` defaults to False) collates with its
`DataCollatorForLanguageModeling`, which pads each batch to its own longest sample (`pad(..., padding_side=
"right")`, no fixed length; with `padding_free` it concatenates the batch instead, whose length varies as much):
each step then has its own length, up to `max_length` (estimate/varying_lengths.py). With packing the samples are
packed into blocks of `max_length`. A plain HF Trainer script brings its own collator, which is not read: the
default stays (the built-in trainer's packed windows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments


def batches_vary_in_length(args: TrainerArguments) -> str | None:
    """Why the batches vary in length where the arguments are an SFTConfig's and leave `packing` at TRL's
    default (the trainer layer's note); None where they say packing (its value is not read: `--packing false` is
    taken as unknown too) or are not TRL SFT's."""
    if args.trl_config != "sft" or "packing" in args.unread:  # DPO/GRPO configs are "trl"
        return None
    return "packing: SFTConfig's default false (trl 1.16): its collator pads each batch to its own longest sample"
