"""AW809: a DPO/GRPO run as one process that sees several GPUs, which TRL refuses (nn.DataParallel).

tests/posttraining/test_trl_devices.py builds the real DPOConfig in a process that sees N GPUs (CUDA's device
count given, as no GPU is here) and checks the rule against the `n_gpu` transformers derives and TRL refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.hardware._shared import distributed_type, gpu_ids
from accelwiz.rules.rule import Needs, rule
from accelwiz.rules.trl_batch import trl_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


@rule("AW809", "trl-one-process-sees-several-gpus", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Launch one process per GPU (distributed_type: MULTI_GPU, num_processes = GPUs), or pin one GPU with "
          "`gpu_ids: 0`")
def trl_one_process_sees_several_gpus(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With `--kind dpo|grpo` and `--system`, finds `distributed_type: 'NO'` on GPUs where the one process sees
    more than one: every GPU of the machine, or the `gpu_ids` that `accelerate launch` exports as
    `CUDA_VISIBLE_DEVICES` (unless the Trainer's `--use_cpu` is given).

    ## Why is this bad?
    Without a distributed launch, transformers' `TrainingArguments._setup_devices` sets `n_gpu` to
    `torch.cuda.device_count()` and the Trainer would wrap the model in `nn.DataParallel`; `DPOTrainer` and
    `GRPOTrainer` (trl 1.16, after `Trainer.__init__`) refuse that ("does not support `nn.DataParallel`") once
    the model is loaded. A supervised run would silently train on DataParallel instead. The YAML's `use_cpu: true`
    does not prevent it: `ACCELERATE_USE_CPU` zeroes `n_gpu` first, but the single-process branch then sets it to
    the device count again unless the Trainer's own `--use_cpu` is given.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --kind dpo
    distributed_type: 'NO'
    ```
    Use instead:
    ```yaml
    # accelwiz check --system 8xH100-80GB --kind dpo
    distributed_type: 'NO'
    gpu_ids: '0'
    ```
    """
    found = trl_view(ctx)
    system = ctx.system
    if found is None or system is None or not system.gpus or distributed_type(ctx) != "NO":
        return
    if found[0]["use_cpu"]:
        return  # the Trainer's own use_cpu: n_gpu 0 (the YAML's use_cpu is not enough, see the docs)
    selected = gpu_ids(ctx)
    visible = len(selected) if selected is not None else system.gpu_count
    if visible > 1:
        source = f"gpu_ids {ctx.effective.gpu_ids.value}" if selected is not None else (
            f"{system.name or 'the machine'}'s {visible} GPUs")
        yield Finding("accelerate", ("distributed_type",),
                      f"one process sees {visible} GPUs ({source}): the Trainer would use nn.DataParallel, which "
                      f"{'DPO' if found[0].kind == 'dpo' else 'GRPO'}Trainer refuses")
