"""AW701-AW705: the HF Trainer's arguments against the Accelerate YAML and the DeepSpeed JSON (needs
--training-args or the training command line after `--`). The optimizer rules are in trainer_optimizer.py, the
values the Trainer sets in the effective config in trainer_effective.py; `trainer_view` (trainer_view.py) is what
they share.

The Trainer fills the JSON's "auto" values from its arguments and refuses the values that disagree with them
(transformers' `HfTrainerDeepSpeedConfig`); accelwiz.config.trainer_deepspeed models those steps. Every rule here is
silent when no Trainer arguments were given.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule
from accelwiz.rules.trainer_view import (
    TrainerView,
    _distributed_type,
    _inline_section,
    _same_file,
    _show,
    _written_precision,
    config_location,
    deepspeed_argument_path,
    trainer_view,
)

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext



@rule("AW701", "trainer-argument-invalid", Severity.ERROR,
      fix="Write a value of the argument's type (an integer for sizes and steps, true/false for flags)")
def trainer_argument_invalid(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a Trainer argument that transformers refuses before training starts: a value `HfArgumentParser` cannot
    convert (`--per_device_train_batch_size 4.5`, `--bf16 maybe`), an option missing its value, `--fp16` together
    with `--bf16`, a `--deepspeed` file that does not exist (where the script runs) or is not JSON, a transformers
    4 argument that transformers 5 no longer has (`--warmup_ratio`: write `--warmup_steps 0.1`; `--no_cuda`,
    `--per_gpu_*`, ...), or a value it no longer takes (`--optim adamw_hf`: write `adamw_torch`).

    ## Why is this bad?
    The script exits in argument parsing or in `TrainingArguments.__post_init__` ("At most one of fp16 and bf16
    can be True, but not both"), on every node, after the launcher has started all of them.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fp16 --bf16
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    Use instead: one of `--fp16` and `--bf16`.
    """
    view = trainer_view(ctx)
    if view is None:
        return
    from accelwiz.config.trainer_fields import REMOVED_IN_5

    for problem in view.args.problems:
        fix = ("Use the transformers 5 spelling, or define the argument in the script's own dataclass"
               if problem.name in REMOVED_IN_5 and problem.written.startswith(("--", problem.name)) else None)
        yield Finding(None, (), f"Trainer argument {problem.written} ({view.args.source}): {problem.message}",
                      fix=fix)
    if view.problem:
        yield Finding(None, (), view.problem, fix="Pass the path of an existing DeepSpeed JSON to --deepspeed")


@rule("AW702", "trainer-deepspeed-mismatch", Severity.ERROR,
      fix='Set the DeepSpeed value to "auto", or pass the Trainer argument that matches it')
def trainer_deepspeed_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Runs the HF Trainer's own fill of the DeepSpeed config (`HfTrainerDeepSpeedConfig.trainer_config_process`
    and `trainer_config_finalize`): every value that is not `"auto"` must equal what the Trainer arguments give
    it: the micro-batch (`per_device_train_batch_size`), `gradient_accumulation_steps`, `train_batch_size`
    (world size x micro-batch x accumulation), `gradient_clipping` (`max_grad_norm`), the optimizer's lr, betas,
    eps and weight decay, the scheduler's `warmup_max_lr` and warmup steps, and the fp16/bf16 switches. Where
    the Accelerate YAML names the JSON, accelerate first fills its fp16/bf16 `"auto"` from `mixed_precision`,
    and adds `gradient_accumulation_steps: 1` when the key is absent; both must then match the Trainer too.
    The world size is the YAML's `num_processes`, or check's `--num-processes` (a JSON given to torchrun alone);
    without either, a fixed `train_batch_size` that no process count can give is still refused.

    ## Why is this bad?
    The Trainer raises "Please correct the following DeepSpeed config values that mismatch TrainingArguments
    values" when it builds the DeepSpeed engine, after the model is loaded on every GPU. The classic case prints
    identical values: `"gradient_accumulation_steps": "8"` is the string "8", not 8 (LLaMA-Factory#1116).

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --per_device_train_batch_size 4
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
    ``` Use instead: `"train_micro_batch_size_per_gpu": "auto"`.
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
    ```
    """
    view = trainer_view(ctx)
    if view is None or view.resolution is None:
        return
    for mismatch in view.resolution.mismatches:
        role, path = config_location(view, mismatch.key)
        same_text = str(mismatch.ds_value) == str(mismatch.hf_value)
        why = (f" (the JSON's {mismatch.ds_value!r} is a {type(mismatch.ds_value).__name__}, the Trainer's a "
               f"{type(mismatch.hf_value).__name__})") if same_text else ""
        source = f" in {view.json_name}" if role is None and view.json_name else ""
        yield Finding(role, path, f"the Trainer refuses {mismatch.key}={_show(mismatch.ds_value)}{source}: "
                                  f"{mismatch.hf_key} is {_show(mismatch.hf_value)}{why} "
                                  f"[transformers: {mismatch.line}]")
    yield from _batch_without_world(view)
    if view.resolution.precision_error:
        yield Finding(view.json_role, (), f"accelerate refuses the precision: {view.resolution.precision_error}",
                      fix="Make --fp16/--bf16 (or the YAML's mixed_precision) agree with the JSON's fp16/bf16")


def _batch_without_world(view: TrainerView) -> Iterator[Finding]:
    """Without the world size (a JSON alone, no --num-processes), a fixed train_batch_size is still refused when
    no process count can give it: the Trainer fills world x micro-batch x accumulation and compares."""
    from accelwiz.config.trainer_deepspeed import get_value

    if view.world_size is not None or view.resolution is None or "train_batch_size" not in view.resolution.open_keys:
        return
    total = get_value(view.resolution.config, "train_batch_size")
    step = view.args["per_device_train_batch_size"] * view.args["gradient_accumulation_steps"]
    if type(total) is int and type(step) is int and step > 0 and total % step:
        role, path = config_location(view, "train_batch_size")
        yield Finding(role, path, f"the Trainer refuses train_batch_size={total}: it fills world size x "
                                  f"per_device_train_batch_size x gradient_accumulation_steps = world size x "
                                  f"{step}, and no number of processes gives {total}",
                      fix='Set "train_batch_size": "auto" (or pass --num-processes to check the exact value)')


@rule("AW703", "trainer-bf16-without-native-support", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Pass --fp16 instead of --bf16 on GPUs older than Ampere (V100, T4, RTX 20xx)")
def trainer_bf16_without_native_support(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds bf16 asked for by the Trainer (`--bf16`, `--bf16_full_eval`, or a DeepSpeed `"bf16": {"enabled":
    "auto"}` that the run's precision fills with true) on GPUs without bf16 tensor cores (compute capability
    below 8.0).

    ## Why is this bad?
    Before torch counted emulation (`is_bf16_supported(including_emulation=True)`), `TrainingArguments` refused
    it outright: "Your setup doesn't support bf16/gpu" (dolly#11, on 8x V100). Today the check passes and the
    matrix multiplies run emulated, several times slower than fp16 on the same GPU.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB accelerate.yaml -- --bf16
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      deepspeed_config_file: ds_z3_bf16_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3}}
    ```
    Use instead: `--fp16` (and `"fp16": {"enabled": "auto"}` in the JSON).
    """
    view = trainer_view(ctx)
    if view is None or ctx.system is None or not ctx.system.gpus or view.args["use_cpu"]:
        return
    old = [g for g in ctx.system.gpus if not g.native_bf16]
    if not old:
        return
    asked = [view.args.where(name) for name in ("bf16", "bf16_full_eval") if view.args[name]]
    resolution = view.resolution
    if not asked and resolution is not None and resolution.precision == "bf16" \
            and resolution.filled.get("bf16.enabled") is True:
        asked = [f'"bf16.enabled": "auto" in {view.json_name}, filled with true by the '
                 f"{resolution.filled_by.get('bf16.enabled', 'trainer')}"]
    if not asked:
        return
    yield Finding(None, (), f"bf16 from the Trainer ({', '.join(asked)}) on {old[0].name} ({old[0].architecture}, "
                            f"{len(old)} GPU(s)): no bf16 tensor cores, so it runs emulated; "
                            "transformers with an older torch refuses it (\"Your setup doesn't support bf16/gpu\")")


@rule("AW704", "trainer-precision-differs-from-yaml", Severity.WARNING,
      fix="Make the Trainer's --fp16/--bf16 and the YAML's mixed_precision say the same")
def trainer_precision_differs_from_yaml(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a run whose precision, after the Trainer has applied its arguments, differs from the Accelerate
    YAML's `mixed_precision`: `--fp16` with `mixed_precision: bf16`, or a DeepSpeed JSON with `"auto"` precision
    that the Trainer fills with false (no `--bf16` given) while the YAML says bf16.

    ## Why is this bad?
    `TrainingArguments.mixed_precision` takes the launcher's value only when neither `--fp16` nor `--bf16` is
    given; otherwise the Trainer's flag wins and the YAML is silently ignored. With `--deepspeed`, the Trainer
    fills `"auto"` before accelerate sees the YAML's precision: the run trains in fp32 with a YAML saying bf16.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fp16
    distributed_type: MULTI_GPU
    num_processes: 2
    mixed_precision: bf16
    ```
    with `--fp16` on the training command line. Use instead: `--bf16`, or `mixed_precision: fp16`.
    ```yaml
    # accelwiz check accelerate.yaml -- --fp16
    distributed_type: MULTI_GPU
    num_processes: 2
    mixed_precision: fp16
    ```
    """
    view = trainer_view(ctx)
    written = _written_precision(ctx)
    if view is None or written is None or written not in ("no", "fp16", "bf16"):
        return
    if view.resolution is not None and view.resolution.precision_error is None:
        runs = view.resolution.precision
        runs = "no" if runs == "fp32" else runs
        how = f"the DeepSpeed config as the Trainer fills it ({view.json_name}) trains in {runs}"
    elif view.resolution is None:
        runs = view.args.mixed_precision(written)
        how = f"the Trainer's {'--fp16' if runs == 'fp16' else '--bf16'} wins"
    else:
        return
    if runs != written:
        yield Finding("accelerate", ("mixed_precision",), f"mixed_precision is {written}, but {how}"
                      + ("" if view.resolution is None else f" (Trainer flags: fp16={view.args['fp16']}, "
                                                             f"bf16={view.args['bf16']})"))


@rule("AW705", "trainer-deepspeed-differs-from-yaml", Severity.WARNING,
      fix="Pass the same JSON to --deepspeed as the YAML's deepspeed_config_file, or drop one of them")
def trainer_deepspeed_differs_from_yaml(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a Trainer `--deepspeed` that names another DeepSpeed config than the Accelerate YAML's
    `deepspeed_config_file`, or that turns DeepSpeed on under a YAML whose `distributed_type` is not DEEPSPEED.

    ## Why is this bad?
    `TrainingArguments(deepspeed=...)` builds the DeepSpeed plugin itself and hands it to the Accelerator: the
    Trainer's file wins and the YAML's file (or its FSDP/DDP settings) is ignored without a word. Which file a
    run used is then a matter of reading the script's command line.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --deepspeed ds_zero3.json
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_zero2.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    with `--deepspeed ds_zero3.json` on the training command line. Use instead: one file, named in one place.
    """
    view = trainer_view(ctx)
    if view is None or view.path != "trainer" or ctx.accelerate is None:
        return
    kind = _distributed_type(ctx)
    reference = ctx.deepspeed_reference
    if kind != "DEEPSPEED":
        yield Finding("accelerate", ("distributed_type",),
                      f"the Trainer's --deepspeed {view.json_name} turns DeepSpeed on; the YAML's "
                      f"distributed_type {kind} and its settings are ignored")
        return
    written_file = deepspeed_argument_path(view.args)
    if reference is not None and written_file is not None:
        yaml_file = reference.resolved or Path(reference.written)
        if not _same_file(yaml_file, written_file):
            yield Finding("accelerate", ("deepspeed_config", "deepspeed_config_file"),
                          f"the Trainer's --deepspeed {view.args.deepspeed} is used; the YAML's "
                          f"deepspeed_config_file {reference.written} is ignored")
    elif reference is None:
        inline = [k for k in _inline_section(ctx) if k not in ("deepspeed_multinode_launcher",)]
        if inline:
            yield Finding("accelerate", ("deepspeed_config",),
                          f"the Trainer's --deepspeed {view.json_name} is used; the YAML's inline deepspeed_config "
                          f"({', '.join(sorted(inline))}) is ignored")
