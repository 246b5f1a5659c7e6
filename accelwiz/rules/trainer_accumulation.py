"""AW719-AW720: the Trainer's --gradient_accumulation_steps against a DeepSpeed JSON that has no
`gradient_accumulation_steps` key.

Under DeepSpeed the engine, not the Trainer, accumulates: the Trainer hands its count over only by filling a
`"gradient_accumulation_steps": "auto"` (transformers 5.25 integrations/deepspeed.py `trainer_config_process`:
`fill_match` returns when the key is absent). accelerate's `DeepSpeedPlugin.__post_init__` (utils/dataclasses.py)
then writes the missing key as 1, and `Accelerator._prepare_deepspeed` takes DeepSpeed's value over the Trainer's
("Gradient accumulation steps mismatch ... Using DeepSpeed's value"). The family of AW718 (clipping).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.trainer_view import TrainerView, trainer_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

_FIX = 'Add `"gradient_accumulation_steps": "auto"` to the DeepSpeed JSON (the Trainer then fills it)'


def _accumulation_dropped(ctx: CheckContext) -> tuple[TrainerView, int] | None:
    """The view and the Trainer's accumulation when the JSON the Trainer opens (`--deepspeed`, or a JSON checked
    alone) has no `gradient_accumulation_steps` key and the Trainer asks for more than 1 step."""
    view = trainer_view(ctx)
    if view is None or view.path != "trainer" or view.written is None or \
            "gradient_accumulation_steps" in view.written:
        return None
    steps = view.args["gradient_accumulation_steps"]
    if not isinstance(steps, int) or isinstance(steps, bool) or steps <= 1:
        return None
    if view.resolution is not None and any(m.key == "train_batch_size" for m in view.resolution.mismatches):
        return None  # the Trainer refuses the file's train_batch_size first (AW702): the run never gets this far
    return view, steps


def _has_batch_triple(view: TrainerView) -> bool:
    """train_batch_size and the micro-batch both in the JSON: DeepSpeed checks them against accumulation 1."""
    written = view.written or {}
    return "train_batch_size" in written and "train_micro_batch_size_per_gpu" in written


@rule("AW719", "trainer-accumulation-not-applied", Severity.WARNING, fix=_FIX)
def trainer_accumulation_not_applied(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--gradient_accumulation_steps` above 1 given to the Trainer while the DeepSpeed JSON it opens with
    `--deepspeed` has no `gradient_accumulation_steps` key (and not both `train_batch_size` and the micro-batch,
    with which DeepSpeed's batch check fails instead: AW720).

    ## Why is this bad?
    The Trainer fills only keys that are present (`fill_match` returns when the key is absent); accelerate's
    `DeepSpeedPlugin` then writes the missing key as 1, and the Accelerator uses DeepSpeed's value. The engine
    steps the optimizer after every micro-batch: with `--gradient_accumulation_steps 4` the global batch is a
    quarter of the one asked for, and nothing fails.

    ## Example
    ```console
    accelwiz check ds_config.json -- --deepspeed ds_config.json --gradient_accumulation_steps 4
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```console
    accelwiz check ds_config.json -- --deepspeed ds_config.json --gradient_accumulation_steps 4
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
    ```
    """
    found = _accumulation_dropped(ctx)
    if found is None or _has_batch_triple(found[0]):
        return
    view, steps = found
    micro = view.args["per_device_train_batch_size"]
    world = view.world_size
    batch = f"{micro} x 1 x {world} = {micro * world} instead of {micro * steps * world}" \
        if isinstance(micro, int) and world else f"{steps} times smaller than asked"
    yield Finding(view.json_role, (),
                  f"{view.args.where('gradient_accumulation_steps')} is not applied: {view.json_name} has no "
                  "`gradient_accumulation_steps`, which the Trainer fills only where it is \"auto\"; accelerate "
                  f"writes it as 1, so the optimizer steps every micro-batch (global batch {batch})")


@rule("AW720", "trainer-accumulation-batch-assertion", Severity.ERROR, fix=_FIX)
def trainer_accumulation_batch_assertion(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--gradient_accumulation_steps` above 1 given to the Trainer while the DeepSpeed JSON it opens has
    `train_batch_size` and `train_micro_batch_size_per_gpu` (numbers or `"auto"`) but no
    `gradient_accumulation_steps` key.

    ## Why is this bad?
    The Trainer fills `train_batch_size` with micro-batch x accumulation x world size, but not the absent
    accumulation key, which accelerate's `DeepSpeedPlugin` then writes as 1: DeepSpeed's batch check fails at
    start-up, e.g. "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size
    256 != 8 * 1 * 8".

    ## Example
    ```console
    accelwiz check ds_config.json -- --deepspeed ds_config.json --gradient_accumulation_steps 4
    ```
    ```json
    {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
     "zero_optimization": {"stage": 2}}
    ```
    """
    found = _accumulation_dropped(ctx)
    if found is None or not _has_batch_triple(found[0]):
        return
    view, steps = found
    config = view.resolution.config if view.resolution is not None else {}
    total, micro = config.get("train_batch_size"), config.get("train_micro_batch_size_per_gpu")
    world = view.world_size
    numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in (total, micro)) and world
    said = f": {total} != {micro} * 1 * {world}" if numbers else ""
    yield Finding(view.json_role, ("train_batch_size",) if view.json_role == "deepspeed" else (),
                  f"{view.args.where('gradient_accumulation_steps')} never reaches DeepSpeed: {view.json_name} has "
                  "no `gradient_accumulation_steps` (the Trainer fills only keys that are there) and accelerate "
                  f"writes it as 1, while train_batch_size counts {steps} steps: DeepSpeed's batch check fails at "
                  f"start-up{said}")
