"""AW0xx: keys, types and values that do not match the schema of the file they are in.

Accelerate rejects unknown top-level keys but reads nested sections with `dict.get`; DeepSpeed ignores unknown
top-level keys and validates only some blocks. These rules apply one strict schema to every level of both files.
A key written twice (AW012, AW013) is `duplicate_keys.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule


def _issues(ctx: CheckContext, kind: str) -> Iterator[Finding]:
    from accelwiz.rules.dead_keys import ignored_by_deepspeed
    from accelwiz.rules.placeholders import claimed_placeholder

    for role, issues in ctx.schema.items():
        for issue in issues:
            if issue.kind != kind or ignored_by_deepspeed(role, issue):  # AW017's warning
                continue
            if role == "accelerate" and len(issue.path) == 1 and claimed_placeholder(ctx, str(issue.path[0])):
                continue  # a template placeholder: one finding, the placeholder rule's
            yield Finding(role, issue.path, issue.message, issue.hint)  # type: ignore[arg-type]


@rule("AW001", "unknown-key", Severity.ERROR, fix="Remove the key, or correct its spelling")
def unknown_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds keys that neither Accelerate nor DeepSpeed knows, at any depth, and suggests the closest known key.

    ## Why is this bad?
    Accelerate only checks top-level keys. Inside `deepspeed_config`, `fsdp_config` and the other sections a typo
    such as `zero_stgae: 3` is accepted and ignored, so the run silently uses the default (ZeRO-2). DeepSpeed
    ignores unknown top-level keys in its JSON the same way: a misspelled one is reported here, any other is
    AW017's warning (it changes nothing).

    ## Example
    ```yaml
    deepspeed_config:
      zero_stgae: 3
    ```
    Use instead: `zero_stage: 3`.
    ```yaml
    deepspeed_config:
      zero_stage: 3
    ```
    """
    yield from _issues(ctx, "unknown-key")


@rule("AW002", "misplaced-key", Severity.ERROR, fix="Move the key to the section or file that reads it")
def misplaced_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds known keys written in a section or file that does not read them, such as
    `train_micro_batch_size_per_gpu` inside the Accelerate YAML's `deepspeed_config`, a `stage3_*` key at the top
    of a DeepSpeed JSON, or `mixed_precision` inside a DeepSpeed JSON.

    ## Why is this bad?
    The key looks meaningful but nothing reads it there, so its value never takes effect (accelerate#2298).

    ## Example
    ```yaml
    deepspeed_config:
      train_micro_batch_size_per_gpu: 4
    ```
    Use instead: put `"train_micro_batch_size_per_gpu": 4` in the DeepSpeed JSON, or set the batch size of the
    DataLoader that you pass to `accelerator.prepare()`.
    """
    from accelwiz.rules.dead_keys import harmless

    for finding in _issues(ctx, "misplaced-key"):
        if finding.role != "accelerate" or harmless(ctx, finding.path) is None:
            yield finding  # a dead key whose value is what runs anyway is AW014's warning


@rule("AW003", "wrong-type", Severity.ERROR, fix="Write a value of the expected type")
def wrong_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds values of the wrong type: a list where a mapping belongs, a string where a boolean belongs, a
    fractional number where an integer belongs.

    ## Why is this bad?
    Neither library checks nested types when it loads the file; the wrong type fails later, inside the worker
    processes, often after the model has been loaded (`TypeError: '>' not supported between 'str' and 'int'`).

    ## Example
    ```yaml
    fsdp_config:
      fsdp_offload_params: "false"
    ```
    Use instead: `fsdp_offload_params: false`.
    ```yaml
    fsdp_config:
      fsdp_offload_params: false
    ```
    """
    yield from _issues(ctx, "wrong-type")


@rule("AW004", "invalid-value", Severity.ERROR, fix="Use one of the allowed values")
def invalid_value(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds values outside the allowed set or range: `zero_stage: 4`, `distributed_type: MULTI_GPUS`,
    `offload_optimizer_device: gpu`, a negative process count.

    ## Why is this bad?
    Some of these fail at launch, others only in `deepspeed.initialize()` after the model is loaded, and a few
    are silently replaced by a default.

    ## Example
    ```yaml
    deepspeed_config:
      offload_optimizer_device: gpu
    ```
    Use instead: `offload_optimizer_device: cpu` (or `none`).
    ```yaml
    deepspeed_config:
      offload_optimizer_device: cpu
    ```
    """
    yield from _issues(ctx, "invalid-value")


@rule("AW005", "numeric-string", Severity.ERROR, fix="Remove the quotes around the number")
def numeric_string(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds numbers written as strings, such as `"gradient_accumulation_steps": "8"`.

    ## Why is this bad?
    Accelerate passes the string on unchanged and fails on the first comparison; DeepSpeed's top-level keys are
    not converted either; the HF Trainer reports `ds gradient_accumulation_steps=8 vs hf
    gradient_accumulation_steps=8` as a mismatch because `"8" != 8` (LLaMA-Factory#1116).

    ## Example
    ```json
    {"gradient_accumulation_steps": "8"}
    ```
    Use instead: `{"gradient_accumulation_steps": 8}`.
    ```json
    {"gradient_accumulation_steps": 8}
    ```
    """
    yield from _issues(ctx, "numeric-string")


@rule("AW006", "float-for-int", Severity.ERROR, fix="Write the number as a plain integer")
def float_for_int(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds integers written in exponent notation or as floats where an integer is required, such as
    `fsdp_min_num_params: 1e8` in YAML.

    ## Why is this bad?
    YAML 1.1 (PyYAML, which Accelerate uses) reads `1e8` as the *string* "1e8" because it has no decimal point;
    `int("1e8")` then fails inside the worker (accelerate#1361, #3854). A float such as `2.0` for
    `num_processes` fails in `range()`.

    ## Example
    ```yaml
    fsdp_config:
      fsdp_min_num_params: 1e8
    ```
    Use instead: `fsdp_min_num_params: 100000000`.
    ```yaml
    fsdp_config:
      fsdp_min_num_params: 100000000
    ```
    """
    yield from _issues(ctx, "float-for-int")


@rule("AW007", "unquoted-no-distributed-type", Severity.WARNING, fix="Quote it: `distributed_type: 'NO'`")
def unquoted_no_distributed_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `distributed_type: NO` written without quotes.

    ## Why is this bad?
    YAML 1.1 reads an unquoted `NO` as the boolean `false`. Accelerate happens to launch `false` like `"NO"`
    today, so the run works by accident; any tool that validates the value, and any future version that stops
    coercing it, will not. It already does not get the one-process default that `"NO"` gets: without
    `num_processes`, `accelerate launch` stops with "You need to manually pass in `--num_processes`" (AW111).
    `accelerate config` itself writes `'NO'` quoted.

    ## Example
    ```yaml
    distributed_type: NO
    ```
    Use instead: `distributed_type: 'NO'`.
    ```yaml
    distributed_type: 'NO'
    ```
    """
    yield from _issues(ctx, "yaml-boolean-for-name")


@rule("AW008", "yaml-boolean-for-string", Severity.ERROR, fix="Quote the word so YAML keeps it as text")
def yaml_boolean_for_string(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds unquoted `no`, `yes`, `on` or `off` where the key expects text, such as `mixed_precision: no`.

    ## Why is this bad?
    YAML 1.1 turns these words into booleans. `mixed_precision: no` reaches accelerate as `False` and fails with
    `AttributeError: 'bool' object has no attribute 'lower'`.

    ## Example
    ```yaml
    mixed_precision: no
    ```
    Use instead: `mixed_precision: 'no'`.
    ```yaml
    mixed_precision: 'no'
    ```
    """
    yield from _issues(ctx, "yaml-boolean-for-string")


@rule("AW009", "legacy-key", Severity.WARNING, fix="Replace the legacy key with its current form")
def legacy_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds keys that still work but only through a compatibility path: Accelerate's top-level `fp16: true` and
    `dynamo_backend`, DeepSpeed's `cpu_offload`, `cpu_offload_param`, `stage3_gather_fp16_weights_on_model_save`
    and the `bfloat16` block.

    ## Why is this bad?
    Legacy keys are converted with a warning at best and can be dropped in any release; tools that read the
    current keys (and people) miss them. Giving the legacy and the current key together is an error in DeepSpeed.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "cpu_offload": true}}
    ```
    Use instead: `"offload_optimizer": {"device": "cpu"}`.
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```
    """
    yield from _issues(ctx, "legacy-key")


@rule("AW010", "removed-key", Severity.ERROR, fix="Remove the key; see the hint for its replacement")
def removed_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds keys that current releases refuse: Accelerate's `ipex_config` (removed in 1.13) and `tp_config`;
    DeepSpeed 0.19.8's removed features (`amp`, `elasticity`, `sparse_attention`, `curriculum_learning`,
    `mics_shard_size`, ...).

    ## Why is this bad?
    Accelerate raises "had unknown keys" at launch; DeepSpeed 0.19.8 raises `DeepSpeedConfigError` at startup.

    ## Example
    ```yaml
    ipex_config:
      ipex: true
    ```
    Use instead: remove the section.
    """
    yield from _issues(ctx, "removed-key")


@rule("AW011", "missing-required-key", Severity.ERROR, fix="Add the required key")
def missing_required_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds required keys that are absent, such as `distributed_type` in an Accelerate config.

    ## Why is this bad?
    Accelerate refuses the file: "A `distributed_type` must be specified in the config file."

    ## Example
    ```yaml
    num_processes: 2
    ```
    Use instead: add `distributed_type: MULTI_GPU`.
    ```yaml
    num_processes: 2
    distributed_type: MULTI_GPU
    ```
    """
    yield from _issues(ctx, "missing-key")
