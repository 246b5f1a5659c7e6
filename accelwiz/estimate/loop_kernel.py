"""Which AdamW loop a run steps with (`--optimizer-kernel loop`, or the legacy Trainer's transformers.AdamW) and how
many parameter-sized temporaries it holds at once (loop_step.py says what each makes, and sizes the tensors it
steps outside DeepSpeed; deepspeed_step.py sizes its flat partitions). Apart from loop_step.py so that
deepspeed_step.py can ask without importing the parameter widths of states.py, which imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.cpu_step import ADAM_CPU_TEMPORARIES

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

HF_ADAMW_BEFORE = (4, 32, 0)  # transformers PR #25109: the Trainer's default adamw_hf until 4.31 (trainer_optim.py)
HF_ADAMW_TEMPORARIES = 1  # transformers' AdamW: `exp_avg_sq.sqrt().add_(eps)`


def runs_a_loop(workload: Workload) -> bool:
    """AdamW stepped one parameter at a time: `--optimizer-kernel loop`, or the legacy Trainer's transformers.AdamW."""
    return workload.optimizer == "adamw" and (workload.legacy_trainer or workload.optimizer_kernel == "loop")


def loop_temporaries(workload: Workload) -> tuple[int, str]:
    """How many parameter-sized temporaries the loop holds at once, and whose loop it is: transformers' AdamW
    where the run is the legacy Trainer's or its transformers is older than 4.32 (where `loop` is the Trainer's
    adamw_hf default, resolution/trainer_optim.py), else torch's single-tensor AdamW."""
    transformers = workload.stack.transformers
    if workload.legacy_trainer or (transformers is not None and transformers < HF_ADAMW_BEFORE):
        return HF_ADAMW_TEMPORARIES, "transformers' AdamW (exp_avg_sq.sqrt().add_(eps))"
    return ADAM_CPU_TEMPORARIES, "torch's single-tensor AdamW ((exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps))"
