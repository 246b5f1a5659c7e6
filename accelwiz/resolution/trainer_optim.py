"""The HF Trainer's AdamW kernel where `optim` is not given: its default changed twice, so the stack decides.

* transformers PR #25109 ("Change default from `adamw_hf` to `adamw_torch`", merged after v4.31.0 of July 2023:
  first in 4.32.0): before it the default was `adamw_hf`, transformers' own AdamW, a loop over the parameters
  that allocates one parameter's temporaries at a time (estimate/loop_step.py: the largest one's; under ZeRO the
  flat partition is that one parameter);
* from 4.32.0 `adamw_torch`, torch.optim.AdamW with its defaults: the multi-tensor `foreach` step on CUDA since
  torch 2.0 (one temporary the size of the trainable parameters), the per-parameter loop before;
* transformers PR #37358 ("Defaults to adamw_torch_fused for Pytorch>=2.8", merged July 2025, after v4.53.0:
  first in 4.54.0): `adamw_torch_fused` where torch is 2.8 or newer (training_args.py `default_optim`, read in
  5.25), torch's fused kernel updating in place.

A library the stack does not know (not installed, no --stack) is today's: the newest behaviour.
No torch, no pydantic (the resolution's rule).
"""

from __future__ import annotations

from accelwiz.resolution.sourced import TRAINER, Sourced
from accelwiz.resolution.stack import Stack, Version

TORCH_ADAMW_DEFAULT_SINCE: Version = (4, 32, 0)  # transformers: adamw_hf -> adamw_torch (PR #25109)
FUSED_DEFAULT_SINCE: Version = (4, 54, 0)  # transformers: adamw_torch_fused where torch >= 2.8 (PR #37358)
FUSED_DEFAULT_TORCH: Version = (2, 8, 0)
FOREACH_DEFAULT_TORCH: Version = (2, 0, 0)  # torch.optim's foreach default on CUDA


def _at_least(version: Version | None, since: Version) -> bool:
    return version is None or version >= since


def _text(version: Version | None) -> str:
    return "today's" if version is None else ".".join(map(str, version))


def trainer_default_kernel(stack: Stack) -> Sourced:
    """The AdamW step the Trainer runs where `optim` is not given, on `stack`: "fused", "foreach" or "loop" (a
    per-parameter loop: one parameter's temporaries at a time), with a note naming the versions that decide it."""
    transformers, torch = _text(stack.transformers), _text(stack.torch)
    on = f"transformers {transformers} with torch {torch}"
    if not _at_least(stack.transformers, TORCH_ADAMW_DEFAULT_SINCE):
        return Sourced("loop", TRAINER, f"optim: the Trainer's default on transformers {transformers} is adamw_hf "
                       "(transformers' AdamW, a loop over the parameters; adamw_torch from 4.32.0, PR #25109)")
    if _at_least(stack.transformers, FUSED_DEFAULT_SINCE) and _at_least(stack.torch, FUSED_DEFAULT_TORCH):
        return Sourced("fused", TRAINER, f"optim: the Trainer's default on {on} is adamw_torch_fused "
                       "(transformers >= 4.54.0 with torch >= 2.8, PR #37358)")
    if not _at_least(stack.torch, FOREACH_DEFAULT_TORCH):
        return Sourced("loop", TRAINER, f"optim: the Trainer's default on {on} is adamw_torch, whose step on torch "
                       "before 2.0 loops over the parameters (foreach became the CUDA default in 2.0)")
    why = "fused needs transformers >= 4.54.0" if not _at_least(stack.transformers, FUSED_DEFAULT_SINCE) \
        else "fused needs torch >= 2.8"
    return Sourced("foreach", TRAINER, f"optim: the Trainer's default on {on} is adamw_torch, torch AdamW's foreach "
                   f"step ({why}, PR #37358)")
