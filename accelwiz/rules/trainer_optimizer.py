"""AW706-AW708: the Trainer's optimizer and checkpointing arguments against the DeepSpeed config it runs with.

With an `optimizer` block DeepSpeed's optimizer replaces the Trainer's; under ZeRO optimizer offload accelerate
swaps the Trainer's own for a DeepSpeed CPU optimizer; DeepSpeed's activation_checkpointing block configures a
checkpointing the Trainer never calls. Each is silent without Trainer arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.trainer_view import config_location, trainer_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


@rule("AW706", "trainer-optimizer-argument-ignored", Severity.WARNING,
      fix="Drop --optim/--lr_scheduler_type, or remove the JSON's optimizer/scheduler block to use them")
def trainer_optimizer_argument_ignored(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--optim` or `--lr_scheduler_type` given to the Trainer while the DeepSpeed config has its own
    `optimizer` or `scheduler` block.

    ## Why is this bad?
    With an `optimizer` block the Trainer builds no optimizer of its own (`deepspeed_optim_sched` hands DeepSpeed
    a `DummyOptim`): `--optim adamw_bnb_8bit` is silently ignored, and so is `--lr_scheduler_type` beside a
    `scheduler` block. The run trains with another optimizer or schedule than the command line says.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --optim adafactor
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},
     "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}
    ```
    with `--optim adafactor` on the training command line.
    Use instead: drop the `optimizer` block to let `--optim` choose.
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    """
    view = trainer_view(ctx)
    if view is None or view.resolution is None:
        return
    config = view.resolution.config
    for argument, block in (("optim", "optimizer"), ("lr_scheduler_type", "scheduler")):
        if view.args.is_given(argument) and isinstance(config.get(block), dict):
            kind = config[block].get("type")
            message = f"{view.args.where(argument)} is ignored: the DeepSpeed config's {block} block ({kind}) is used"
            if block == "scheduler":
                difference = _schedule_difference(view.args, config[block])
                if difference is None:
                    continue  # the block runs the schedule the command line asks for
                message = f"{view.args.where(argument)} is replaced by the DeepSpeed config's {difference}"
            role, path = config_location(view, block)
            yield Finding(role, path if role == "deepspeed" else (), message)


# DeepSpeed's schedulers (runtime/lr_schedules.py) and the Trainer schedule each one runs when its warm-up is
# linear, starts at 0 and the Trainer fills its peak and step counts: WarmupDecayLR decays linearly to 0 at
# total_num_steps, as transformers' `linear` does after its warm-up; WarmupLR holds the peak, as
# `constant_with_warmup` does; WarmupCosineLR decays along a half cosine to cos_min_ratio x the peak (default
# 1e-4: 2e-9 for a 2e-5 peak, where `cosine` ends at 0); its warm-up ramp runs one step behind transformers',
# then the two agree within 1e-3 of the peak (tests/rules/test_scheduler_cosine.py steps both).
_SHAPES = {"WarmupLR": "warm-up, then the peak held", "WarmupDecayLR": "warm-up, then a linear decay to 0",
           "WarmupCosineLR": "warm-up, then a cosine decay", "OneCycle": "a cyclic schedule",
           "LRRangeTest": "a growing range-test schedule"}
_SAME_AFTER_WARMUP = {"WarmupDecayLR": "linear", "WarmupLR": "constant_with_warmup",
                      "WarmupCosineLR": "cosine"}
_COS_MIN_RATIO = 0.0001  # WarmupCosineLR's default end of the decay, as a fraction of the peak


def _schedule_difference(args: Any, block: dict) -> str | None:
    """What the JSON's scheduler does otherwise than --lr_scheduler_type; None when it runs the same schedule."""
    kind, asked = block.get("type"), args["lr_scheduler_type"]
    params = block.get("params") if isinstance(block.get("params"), dict) else {}
    shape = f"scheduler block ({kind}: {_SHAPES.get(kind, 'its own schedule')})"
    if _SAME_AFTER_WARMUP.get(kind) != asked:
        return shape
    # the warm-up: the Trainer fills an "auto" warmup_num_steps with max(1, its warm-up steps); a fraction < 1
    # of the total steps is more than one step on any real run
    steps = params.get("warmup_num_steps", 1000)  # WarmupLR's own default
    steps = args["warmup_steps"] if steps == "auto" else steps
    differences = []
    warmup_type = params.get("warmup_type", "log")
    if isinstance(steps, (int, float)) and (steps > 1 or 0 < steps < 1) and warmup_type != "linear":
        over = f"{steps:g} of the steps" if steps < 1 else f"{steps:g} steps"
        differences.append(f"its warm-up over {over} rises logarithmically (warmup_type {warmup_type}"
                           f"{', DeepSpeed default' if 'warmup_type' not in params else ''}), not linearly")
    start_key = "warmup_min_ratio" if kind == "WarmupCosineLR" else "warmup_min_lr"  # a fraction of the peak there
    start = params.get(start_key, 0)
    if isinstance(start, (int, float)) and start != 0:
        differences.append(f"it starts at {start_key} {start:g}, not 0")
    end = params.get("cos_min_ratio", _COS_MIN_RATIO) if kind == "WarmupCosineLR" else 0
    if isinstance(end, (int, float)) and end > _COS_MIN_RATIO:
        differences.append(f"it decays to cos_min_ratio {end:g} of the peak, not 0")
    if not differences:
        return None
    return f"{shape}: the same {asked} shape, but " + " and ".join(differences)


# What accelerate's `prepare` turns the Trainer's own optimizer into under ZeRO optimizer offload
# (accelerator.py `_prepare_deepspeed` -> utils/deepspeed.py `map_pytorch_optim_to_deepspeed`, while
# zero_force_ds_cpu_optimizer is true, its default): torch AdamW and 32-bit bitsandbytes AdamW become
# DeepSpeedCPUAdam in AdamW mode, torch Adagrad DeepSpeedCPUAdagrad, 32-bit bitsandbytes Lion DeepSpeedCPULion:
# the same update. Every other optimizer becomes DeepSpeedCPUAdam with adamw_mode=False (Adam, L2 weight decay).
_KEPT_UNDER_OFFLOAD = {"adamw_torch": "AdamW", "adamw_torch_fused": "AdamW", "paged_adamw_32bit": "AdamW",
                       "adagrad": "Adagrad", "lion_32bit": "Lion", "paged_lion_32bit": "Lion"}


@rule("AW707", "trainer-optimizer-replaced-under-offload", Severity.WARNING,
      fix='Use --optim adamw_torch (or adagrad, lion_32bit), or add an "optimizer" block to the JSON')
def trainer_optimizer_with_offload(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds ZeRO optimizer offload (`offload_optimizer.device` cpu or nvme) in a DeepSpeed config without an
    `optimizer` block, used by the HF Trainer with an `--optim` other than AdamW, Adagrad or 32-bit Lion.

    ## Why is this bad?
    Without the block the Trainer creates its own torch optimizer and hands it to accelerate's `prepare`, which
    under offload swaps it for a DeepSpeed CPU optimizer (`map_pytorch_optim_to_deepspeed`, while
    `zero_force_ds_cpu_optimizer` is true, its default). AdamW, Adagrad and 32-bit Lion keep their update; any
    other optimizer (SGD, Adafactor, 8-bit AdamW, RMSprop, ...) silently becomes DeepSpeedCPUAdam in Adam mode
    (L2 weight decay): the run trains, with an optimizer nobody chose.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --output_dir out --optim sgd
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto",
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead: the AdamW that the CPU optimizer implements, or a DeepSpeed `optimizer` block.
    ```json
    {"train_micro_batch_size_per_gpu": "auto",
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
     "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}}}
    ```
    """
    view = trainer_view(ctx)
    if view is None or view.resolution is None:
        return
    from accelwiz.config.trainer_deepspeed import get_value

    config = view.resolution.config
    device = get_value(config, "zero_optimization.offload_optimizer.device")
    if not _swaps_torch_optimizer(config, device):
        return
    optim = str(view.args["optim"])
    if optim in _KEPT_UNDER_OFFLOAD:
        return
    role, path = config_location(view, "zero_optimization.offload_optimizer.device")
    yield Finding(role, path, f"optimizer offload to {device} with no optimizer block: accelerate's prepare "
                              f"replaces the Trainer's --optim {optim} with DeepSpeedCPUAdam in Adam mode "
                              "(map_pytorch_optim_to_deepspeed); only AdamW, Adagrad and 32-bit Lion keep "
                              "their update under offload")


def _swaps_torch_optimizer(config: dict, device: object) -> bool:
    """Whether prepare swaps a torch optimizer for a DeepSpeed CPU one: offload, no optimizer block, not opted out."""
    from accelwiz.config.trainer_deepspeed import get_value

    stage = get_value(config, "zero_optimization.stage")
    if device not in ("cpu", "nvme") or "optimizer" in config or stage in (0, None):
        return False
    # accelerate tests `.get("zero_force_ds_cpu_optimizer", True)` for truth: only a false value skips the swap
    forced = config.get("zero_force_ds_cpu_optimizer", True)
    return not (forced is False or (type(forced) is int and forced == 0))


@rule("AW708", "deepspeed-activation-checkpointing-unused-by-trainer", Severity.WARNING,
      fix="Pass --gradient_checkpointing to the Trainer; the JSON's activation_checkpointing block does not "
          "apply to Transformers models")
def deepspeed_activation_checkpointing_unused(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed `activation_checkpointing` block (`partition_activations`, `cpu_checkpointing`, ...) in a
    config used by the HF Trainer, and a Trainer run with gradient checkpointing under ZeRO-3 whose JSON still
    relies on that block.

    ## Why is this bad?
    The block configures `deepspeed.checkpointing.checkpoint`, which Transformers models never call: they
    checkpoint with `torch.utils.checkpoint` when `--gradient_checkpointing` is given. Without the flag no
    activation is recomputed and a ZeRO-3 run sized for checkpointing runs out of memory; with it, the block's
    partitioning and CPU options have no effect.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --output_dir out
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3},
     "activation_checkpointing": {"partition_activations": true}}
    ```
    Use instead: `--gradient_checkpointing true`, and drop the block.
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}
    ```
    """
    view = trainer_view(ctx)
    if view is None or view.resolution is None or view.json_role != "deepspeed":
        return
    block = view.resolution.config.get("activation_checkpointing")
    if not isinstance(block, dict) or not any(v is True for v in block.values()):
        return
    from accelwiz.config.trainer_deepspeed import get_value

    stage = get_value(view.resolution.config, "zero_optimization.stage")
    if view.args.gradient_checkpointing:
        message = ("activation_checkpointing options have no effect on a Transformers model: --gradient_checkpointing"
                   " uses torch.utils.checkpoint" + (" under ZeRO-3" if stage == 3 else ""))
    else:
        message = ("activation_checkpointing does not turn checkpointing on for a Transformers model, and "
                   "--gradient_checkpointing is not given: every activation is kept"
                   + (" under ZeRO-3" if stage == 3 else ""))
    yield Finding("deepspeed", ("activation_checkpointing",), message)


@rule("AW718", "trainer-clipping-not-applied", Severity.WARNING,
      fix='Add `"gradient_clipping": "auto"` to the DeepSpeed JSON (the Trainer then fills it with --max_grad_norm)')
def trainer_clipping_not_applied(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--max_grad_norm` given to the Trainer (any value but DeepSpeed's default 1.0) while the DeepSpeed
    config the Trainer runs with has no `gradient_clipping` key, whichever way the JSON reaches it: `--deepspeed`,
    the YAML's `deepspeed_config_file`, or a JSON checked alone.

    ## Why is this bad?
    Under DeepSpeed the Trainer never clips itself; it hands `max_grad_norm` to DeepSpeed only by filling a
    `"gradient_clipping": "auto"` (`HfTrainerDeepSpeedConfig.fill_match` returns when the key is absent). The engine
    then clips at its own default, 1.0 (DeepSpeed >= 0.19.3; 0.0, no clipping, before): `--max_grad_norm 0.3` is
    silently not applied, and nothing fails.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --max_grad_norm 0.3
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2},
     "gradient_clipping": "auto"}
    ```
    """
    view = trainer_view(ctx)
    if view is None or view.resolution is None or "gradient_clipping" in view.resolution.config:
        return
    args = view.args
    if not args.is_given("max_grad_norm") or args["max_grad_norm"] == 1.0:
        return
    role, _ = config_location(view, "gradient_clipping")
    yield Finding(role, (), f"{args.where('max_grad_norm')} is not applied: {view.json_name} has no "
                            "`gradient_clipping`, which the Trainer fills only where it is \"auto\"; under DeepSpeed "
                            "the Trainer does not clip itself, so DeepSpeed clips at its default, 1.0")
