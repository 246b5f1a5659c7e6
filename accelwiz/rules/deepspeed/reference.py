"""AW201-AW205: the YAML's `deepspeed_config_file` reference, and the `zero_optimization` block that
accelerate requires in the JSON."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO, via_accelerate
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

# accelerate refuses these YAML `deepspeed_config` keys next to `deepspeed_config_file`
# (`DeepSpeedPlugin._deepspeed_config_checks`).
ACCELERATE_FIELDS_REFUSED_WITH_FILE = (
    "gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
    "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
)


@rule("AW201", "deepspeed-file-with-accelerate-fields", Severity.ERROR,
      fix="Remove the key from the Accelerate YAML and set it in the DeepSpeed JSON")
def deepspeed_file_with_accelerate_fields(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `deepspeed_config_file` in the Accelerate YAML together with the inline settings it replaces
    (`zero_stage`, `gradient_accumulation_steps`, `gradient_clipping`, `offload_*_device`,
    `offload_*_nvme_path`, `zero3_save_16bit_model`) or with a top-level `mixed_precision`.

    ## Why is this bad?
    With a DeepSpeed JSON, the JSON owns these settings. accelerate refuses the combination in every worker:
    "When using `deepspeed_config_file`, the following accelerate config variables will be ignored: [...]"
    (accelerate#941). Any `mixed_precision` value counts, even `'no'`, because `accelerate launch` passes it
    on. A DeepSpeed JSON checked beside a `DEEPSPEED` YAML that does not name it is taken as the HF Trainer's
    `deepspeed=` file, which runs the same check.

    ## Example
    ```yaml
    mixed_precision: bf16
    deepspeed_config:
      deepspeed_config_file: ds_config.json
      zero_stage: 3
    ```
    Use instead: keep only `deepspeed_config_file` (and `zero3_init_flag`) and put the stage and the precision
    (`"bf16": {"enabled": true}`) in the JSON.

    ## References
    - accelerate `utils/dataclasses.py`, `DeepSpeedPlugin._deepspeed_config_checks`
    """
    yaml = ctx.accelerate
    if yaml is None:
        return
    if ctx.deepspeed_reference is not None:
        other = "`deepspeed_config_file`"
    elif ctx.deepspeed is not None and ctx.effective.distributed_type.value == "DEEPSPEED":
        other = f"a DeepSpeed JSON ({ctx.deepspeed.path.name}, e.g. the Trainer's `deepspeed=`)"
    else:
        return
    for key in ACCELERATE_FIELDS_REFUSED_WITH_FILE:
        if yaml.has("deepspeed_config", key):
            yield Finding("accelerate", ("deepspeed_config", key),
                          f"`deepspeed_config.{key}` cannot be combined with {other}: accelerate refuses the "
                          "config")
    if yaml.has("mixed_precision"):
        yield Finding("accelerate", ("mixed_precision",),
                      f"`mixed_precision: {yaml.get('mixed_precision')}` cannot be combined with {other}: "
                      "accelerate refuses the config",
                      "Remove `mixed_precision` and enable `fp16` or `bf16` in the DeepSpeed JSON")


@rule("AW202", "deepspeed-file-not-found", Severity.ERROR, fix="Correct the path, or create the DeepSpeed "
                                                               "JSON")
def deepspeed_file_not_found(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `deepspeed_config_file` that names no file, neither relative to the working directory nor next to
    the YAML, or that is an empty string.

    ## Why is this bad?
    Each worker process fails when it opens the file, after `accelerate launch` has started all of them
    ("Expected a string path to an existing deepspeed config"). The string is opened exactly as written: a
    leading `~` is not expanded, only the lowercase `none` means "no file" (`None` is opened as a path), and
    `""` is opened too.

    ## Example
    ```yaml
    deepspeed_config:
      deepspeed_config_file: configs/ds_zero3.jsn
    ```
    Use instead: `deepspeed_config_file: configs/ds_zero3.json`.
    """
    where = ("deepspeed_config", "deepspeed_config_file")
    written = ctx.accelerate.get(*where) if ctx.accelerate is not None else None
    if isinstance(written, str) and not written.strip():
        # `launch` exports it as ACCELERATE_DEEPSPEED_CONFIG_FILE; `DeepSpeedPlugin.__post_init__` takes any string
        # but "none" as a file, and `HfDeepSpeedConfig("")` raises "Expected a string path to an existing deepspeed
        # config" in every worker (accelerate/utils/deepspeed.py)
        yield Finding("accelerate", where, f"`deepspeed_config_file` is {written!r}: accelerate opens it as a file "
                                           "name and every worker fails",
                      fix="Name the DeepSpeed JSON, or write `none` (no file)")
        return
    if isinstance(written, str) and written != "none" and written.strip().lower() == "none":
        yield Finding("accelerate", where, f"`deepspeed_config_file` {written!r} is opened as a file name: only "
                                           "the lowercase 'none' means no file",
                      fix="Write `none` in lower case, or remove the key")
        return
    reference = ctx.deepspeed_reference
    if reference is not None and reference.resolved is None:
        yield Finding("accelerate", where, f"`deepspeed_config_file` {reference.written!r} does not exist")
    elif reference is not None and reference.written.startswith("~"):
        yield Finding("accelerate", where, f"`deepspeed_config_file` {reference.written!r}: accelerate does not "
                                           "expand `~`, so the workers do not find the file",
                      fix=f"Write the full path: {reference.resolved}")


@rule("AW203", "deepspeed-file-relative-to-yaml", Severity.WARNING,
      fix="Write the path relative to the directory you launch from, or make it absolute")
def deepspeed_file_relative_to_yaml(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a relative `deepspeed_config_file` that exists next to the YAML but not relative to the current
    working directory.

    ## Why is this bad?
    accelerate passes the string unchanged to the workers, which open it relative to the directory
    `accelerate launch` runs in. Launched from anywhere but the YAML's directory, the file is not found.

    ## Example
    ```yaml
    # configs/accelerate.yaml, launched from the repository root
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_zero3.json
    ```
    ```json configs/ds_zero3.json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}
    ```
    Use instead: `deepspeed_config_file: configs/ds_zero3.json`.
    ```yaml
    # configs/accelerate.yaml, launched from the repository root
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: configs/ds_zero3.json
    ```
    """
    reference = ctx.deepspeed_reference
    if reference is not None and reference.relative_to_yaml_only:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_config_file"),
                      f"`deepspeed_config_file` {reference.written!r} exists only relative to the YAML "
                      f"({reference.resolved}), not to the working directory")


@rule("AW204", "zero-optimization-missing", Severity.ERROR, fix='Add `"zero_optimization": {"stage": 0}` or '
                                                                'higher')
def zero_optimization_missing(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON used through an Accelerate YAML that has no `zero_optimization` block.

    ## Why is this bad?
    accelerate refuses it in every worker: "Please specify the ZeRO optimization config in the DeepSpeed
    config." (the plain `deepspeed` launcher would run it at stage 0).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 8, "bf16": {"enabled": true}}
    ```
    named by `deepspeed_config_file` in
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 8, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```
    """
    if via_accelerate(ctx) and ctx.deepspeed is not None and not ctx.deepspeed.has(ZERO):
        yield Finding("deepspeed", (), "the DeepSpeed JSON has no `zero_optimization` block, which "
                                       "accelerate requires")


@rule("AW205", "zero-optimization-missing-for-accelerate", Severity.INFO,
      fix='Add `"zero_optimization": {"stage": 0}` if accelerate or the HF Trainer also use the JSON')
def zero_optimization_missing_for_accelerate(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON, checked on its own, without a `zero_optimization` block.

    ## Why is this bad?
    The plain `deepspeed` launcher runs it at ZeRO stage 0, but accelerate and the HF Trainer refuse it:
    "Please specify the ZeRO optimization config in the DeepSpeed config." Check it together with its
    Accelerate YAML to turn this into an error.

    ## Example
    ```json
    {"train_batch_size": 32, "optimizer": {"type": "Adam", "params": {"lr": 1e-4}}}
    ```
    Use instead: add `"zero_optimization": {"stage": 0}`.
    ```json
    {"train_batch_size": 32, "optimizer": {"type": "Adam", "params": {"lr": 1e-4}},
     "zero_optimization": {"stage": 0}}
    ```
    """
    if not via_accelerate(ctx) and ctx.deepspeed is not None and isinstance(ctx.deepspeed.data, dict) \
            and not ctx.deepspeed.has(ZERO):
        yield Finding("deepspeed", (), "no `zero_optimization` block: fine for the `deepspeed` launcher "
                                       "(stage 0), refused by accelerate and the HF Trainer")
