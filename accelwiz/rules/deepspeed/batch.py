"""AW212-AW215: batch size and gradient accumulation (DeepSpeed's batch check, YAML <-> JSON agreement)."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz import coerce
from accelwiz.effective_deepspeed import deepspeed_batch
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import hf_launched, via_accelerate
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule


@rule("AW212", "batch-size-mismatch", Severity.ERROR,
      fix="Make train_batch_size = micro batch x gradient accumulation x world size, or set it to \"auto\"")
def batch_size_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Runs DeepSpeed's batch check, `train_batch_size == train_micro_batch_size_per_gpu x
    gradient_accumulation_steps x world size`, with the world size taken from the YAML's `num_processes`,
    after inferring missing values the way DeepSpeed does (floor division). Without a YAML, it reports values
    that cannot work for any world size.

    ## Why is this bad?
    DeepSpeed refuses the config at startup: "Check batch related parameters. train_batch_size is not equal to
    micro_batch_per_gpu * gradient_acc_step * world_size 60 != 2 * 3 * 8".

    ## Example
    ```json
    {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3,
     "zero_optimization": {"stage": 2}}
    ```
    with
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    Use instead: `"train_batch_size": 48` (2 x 3 x 8), or `"auto"`.
    ```json
    {"train_batch_size": 48, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3,
     "zero_optimization": {"stage": 2}}
    ```
    """
    json = ctx.deepspeed
    if json is None or not isinstance(json.data, dict):
        return
    tbs, mbs, gas = (json.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                           "gradient_accumulation_steps"))
    processes = ctx.effective.num_processes  # the YAML's, or check's --num-processes (a lone JSON's launch)
    world = _data_parallel_world(ctx)
    if world is not None and world > 0:
        if gas is None:
            gas = 1  # accelerate adds gradient_accumulation_steps: 1 to a JSON without it
        if coerce.integer(tbs) is None or (coerce.integer(mbs) is None and coerce.integer(gas) is None):
            return  # "auto" values are filled consistently by accelerate
        result = deepspeed_batch(tbs, mbs, gas, world)
        if isinstance(result, str) and not result.startswith("Either"):
            named = "--num-processes" if processes.source == "command line" else "num_processes ="
            yield Finding("deepspeed", ("train_batch_size",), f"{result} (world size is {named} {world})")
        return
    yield from _batch_fails_for_every_world(tbs, mbs, gas)


def _data_parallel_world(ctx: CheckContext) -> int | None:
    """The data-parallel ranks DeepSpeed's batch check counts; None for a lone JSON launched by an unknown count."""
    processes = ctx.effective.num_processes
    world = processes.value if via_accelerate(ctx) or processes.source == "command line" else None
    sequence_parallel = ctx.effective.sequence_parallel_size.value
    if world is not None and sequence_parallel and sequence_parallel > 1:
        world //= sequence_parallel  # DeepSpeed counts data-parallel ranks only
    return world


def _batch_fails_for_every_world(tbs: object, mbs: object, gas: object) -> Iterator[Finding]:
    """Without a world size: train_batch_size not a multiple of the factors given fails for every world size."""
    # A missing factor is inferred by floor division, so train_batch_size must still be a multiple of the
    # factors that are given (world size 1 then works; no world size works otherwise).
    tbs = coerce.integer(tbs)
    factors = {name: value for name, value in (("train_micro_batch_size_per_gpu", coerce.integer(mbs)),
                                               ("gradient_accumulation_steps", coerce.integer(gas))) if value}
    product = 1
    for value in factors.values():
        product *= value
    if tbs and factors and tbs % product:
        named = " x ".join(factors)
        shown = " x ".join(map(str, factors.values()))
        total = f" = {product}" if len(factors) > 1 else ""
        yield Finding("deepspeed", ("train_batch_size",),
                      f"train_batch_size {tbs} is not a multiple of {named} ({shown}{total}): DeepSpeed's "
                      "batch check fails for every world size")


@rule("AW213", "batch-size-missing", Severity.ERROR,
      fix='Add `"train_micro_batch_size_per_gpu"` (a number, or "auto" with accelerate or the HF Trainer)')
def batch_size_missing(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON with neither `train_batch_size` nor `train_micro_batch_size_per_gpu`.

    ## Why is this bad?
    accelerate and the HF Trainer fill only keys written as `"auto"`; a missing key stays missing, and
    DeepSpeed refuses the config: "Either train_batch_size or train_micro_batch_size_per_gpu needs to be
    provided".

    ## Example
    ```json
    {"zero_optimization": {"stage": 2}}
    ```
    Use instead: add `"train_micro_batch_size_per_gpu": "auto"` (HF) or a number.
    ```json
    {"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}
    ```
    """
    json = ctx.deepspeed
    if json is not None and isinstance(json.data, dict) and not json.has("train_batch_size") \
            and not json.has("train_micro_batch_size_per_gpu"):
        yield Finding("deepspeed", (), "neither `train_batch_size` nor `train_micro_batch_size_per_gpu` is "
                                       "set; DeepSpeed refuses the config")


@rule("AW214", "gradient-accumulation-disagreement", Severity.ERROR,
      fix="Set gradient_accumulation_steps in one place only (the DeepSpeed JSON)")
def gradient_accumulation_disagreement(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gradient_accumulation_steps` written with different numbers in the Accelerate YAML and in the
    DeepSpeed JSON it uses.

    ## Why is this bad?
    accelerate refuses the YAML key next to `deepspeed_config_file`; without the file reference the JSON is
    not used at all. Either way one of the two numbers is not what the run uses (accelerate#941, #1970).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      gradient_accumulation_steps: 1
      deepspeed_config_file: ds_config.json
    ```
    ```json
    {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 10, "zero_optimization": {"stage": 2}}
    ```
    Use instead: only `"gradient_accumulation_steps": 10` in the JSON.
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      deepspeed_config_file: ds_config.json
    ```
    """
    if ctx.accelerate is None or ctx.deepspeed is None:
        return
    in_yaml = coerce.integer(ctx.accelerate.get("deepspeed_config", "gradient_accumulation_steps"))
    in_json = coerce.integer(ctx.deepspeed.get("gradient_accumulation_steps"))
    if in_yaml is not None and in_json is not None and in_yaml != in_json:
        yield Finding("accelerate", ("deepspeed_config", "gradient_accumulation_steps"),
                      f"gradient_accumulation_steps is {in_yaml} in the YAML but {in_json} in the DeepSpeed "
                      "JSON")


@rule("AW215", "hardcoded-gradient-accumulation", Severity.INFO,
      fix='Write `"gradient_accumulation_steps": "auto"` (JSON) or leave it out of the YAML; set it in code')
def hardcoded_gradient_accumulation(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a gradient accumulation count fixed in the config: a number in the YAML's `deepspeed_config` or in
    the DeepSpeed JSON, or a JSON without the key (accelerate then writes 1).

    ## Why is this bad?
    The config value silently wins over `Accelerator(gradient_accumulation_steps=...)` (accelerate#3369,
    #1970; "Gradient accumulation steps mismatch ... Using DeepSpeed's value"), and the HF Trainer refuses a
    different `--gradient_accumulation_steps` ("Please correct the following DeepSpeed config values that
    mismatch TrainingArguments values", LLaMA-Factory#201). The training arguments are not in the config, so a
    mismatch itself cannot be seen here.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 2
      gradient_accumulation_steps: 1
    ```
    Use instead: leave it out and pass `Accelerator(gradient_accumulation_steps=8)`, or `"auto"` in the JSON.
    """
    accumulation = ctx.effective.gradient_accumulation
    if ctx.deepspeed is not None:
        if not hf_launched(ctx):
            return  # for the plain `deepspeed` launcher the JSON is the only place to set it
        if accumulation.source == "json" and accumulation.value is not None:
            yield Finding("deepspeed", accumulation.path,
                          f"gradient_accumulation_steps is fixed at {accumulation.value}; it overrides the training "
                          "script's value (a different TrainingArguments value is refused)")
        # the JSON does not write it (the files' own view: the Trainer's arguments fill a written "auto")
        elif ctx.accelerate is not None and ctx.files_effective.gradient_accumulation.role != "deepspeed":
            yield Finding("deepspeed", (), "the DeepSpeed JSON has no gradient_accumulation_steps: "
                                           "accelerate sets it to 1, overriding "
                                           "Accelerator(gradient_accumulation_steps=...)")
    elif ctx.effective.uses_deepspeed and ctx.deepspeed_reference is None:
        value = accumulation.value if accumulation.source == "yaml" else None
        if value is not None:
            yield Finding("accelerate", accumulation.path,
                          f"gradient_accumulation_steps is fixed at {value} in the YAML; it overrides "
                          "Accelerator(gradient_accumulation_steps=...) and must equal the Trainer's value")
