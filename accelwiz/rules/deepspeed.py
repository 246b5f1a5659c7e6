"""AW2xx DeepSpeed (the JSON, the YAML's `deepspeed_config`, and their agreement) and AW401-AW419 precision.

Most rules read effective values (`ctx.effective`, see accelwiz/effective.py) so that one rule covers both the
inline YAML settings and the DeepSpeed JSON. Raw values are read defensively: a wrong type is the schema
rules' business (AW0xx), so a rule that meets one simply says nothing.

Whether the JSON is launched through accelerate matters: with an Accelerate YAML, accelerate (and the HF
Trainer, which goes through accelerate) fill `"auto"` and refuse a JSON without `zero_optimization`; a JSON
checked alone may also be meant for the plain `deepspeed` launcher, and the rules judge it leniently where
that launcher would accept it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz.config.base import AUTO
from accelwiz.document import Document, KeyPath
from accelwiz.effective import as_float, as_int, deepspeed_batch
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.registry import rule

ZERO = "zero_optimization"

# accelerate refuses these YAML `deepspeed_config` keys next to `deepspeed_config_file`
# (`DeepSpeedPlugin._deepspeed_config_checks`).
ACCELERATE_FIELDS_REFUSED_WITH_FILE = (
    "gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
    "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
)
# "auto" keys accelerate fills (`DeepSpeedPlugin.__post_init__`, `set_mixed_precision`, `_prepare_deepspeed`).
FILLED_BY_ACCELERATE = frozenset({
    "train_micro_batch_size_per_gpu", "train_batch_size", "gradient_accumulation_steps", "gradient_clipping",
    f"{ZERO}.stage", f"{ZERO}.offload_optimizer.device", f"{ZERO}.offload_param.device",
    f"{ZERO}.offload_optimizer.nvme_path", f"{ZERO}.offload_param.nvme_path",
    f"{ZERO}.stage3_gather_16bit_weights_on_model_save", f"{ZERO}.reduce_bucket_size",
    f"{ZERO}.stage3_prefetch_bucket_size", f"{ZERO}.stage3_param_persistence_threshold",
    "optimizer.params.lr", "optimizer.params.weight_decay", "scheduler.params.warmup_min_lr",
    "scheduler.params.warmup_max_lr", "scheduler.params.warmup_num_steps", "scheduler.params.total_num_steps",
    "fp16.enabled", "bf16.enabled",
})
# Filled only by the HF Trainer (`HfTrainerDeepSpeedConfig.trainer_config_process`), never by a plain
# accelerate loop.
FILLED_BY_TRAINER_ONLY = frozenset({"optimizer.params.betas", "optimizer.params.eps"})
HIDDEN_SIZE_KEYS = (f"{ZERO}.reduce_bucket_size", f"{ZERO}.stage3_prefetch_bucket_size",
                    f"{ZERO}.stage3_param_persistence_threshold")
# DeepSpeed itself understands a literal "auto" here (plain DeepSpeed keeps it; accelerate still refuses it).
DEEPSPEED_NATIVE_AUTO = frozenset({
    "pipeline.stages", "data_types.keep_in_fp32_modules", f"{ZERO}.zenflow.select_strategy",
    f"{ZERO}.zenflow.select_interval", f"{ZERO}.zenflow.update_interval",
})
# Blocks DeepSpeed validates with pydantic, which silently drops "auto" and uses the field default.
PYDANTIC_BLOCKS = frozenset({ZERO, "fp16", "bf16", "bfloat16", "comms_logger", "tensorboard", "wandb",
                             "csv_monitor", "comet", "hybrid_engine", "compile", "tensor_parallel", "timers"})
DEEPSPEED_OPTIMIZERS = frozenset({"adagrad", "adam", "adamw", "lamb", "lion", "muon", "muadam", "muadamw",
                                  "musgd"})
# `torch.optim` attribute names DeepSpeed also accepts (exact case); a test checks this list against torch.
TORCH_OPTIMIZERS = frozenset({"ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
                              "Muon", "NAdam", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam"})
DEEPSPEED_SCHEDULERS = ("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR")
_TRUE_WORDS = ("true", "yes", "on", "1", "t", "y")


def enabled(value: Any) -> bool:
    """Whether DeepSpeed (lax pydantic) and accelerate (`str(v).lower() == "true"`) read a flag as on."""
    return value is True or (isinstance(value, str) and value.strip().lower() in _TRUE_WORDS)


def _dotted(path: KeyPath) -> str:
    return ".".join(map(str, path))


def _stage(ctx: CheckContext) -> int | None:
    return ctx.effective.zero_stage.value


def _autos(data: Any, path: KeyPath = ()) -> Iterator[KeyPath]:
    """Every key path whose value is the string "auto"."""
    if isinstance(data, dict):
        for key, value in data.items():
            if value == AUTO:
                yield (*path, key)
            else:
                yield from _autos(value, (*path, key))


def _hf_style(document: Document) -> bool:
    """Whether the JSON was written for the HF integrations: "auto" on a key they fill, outside ZeRO.

    "auto" inside `zero_optimization` is no evidence: plain DeepSpeed silently drops it there, and JSONs for
    the `deepspeed` launcher carry such leftovers (DeepSpeedExamples' SGLang configs).
    """
    return any(_dotted(p) in FILLED_BY_ACCELERATE | FILLED_BY_TRAINER_ONLY and p[0] != ZERO
               for p in _autos(document.data))


def _via_accelerate(ctx: CheckContext) -> bool:
    return ctx.accelerate is not None


def _hf_launched(ctx: CheckContext) -> bool:
    """Launched through accelerate (and maybe the HF Trainer): with a YAML, or a JSON written in HF style."""
    return _via_accelerate(ctx) or (ctx.deepspeed is not None and _hf_style(ctx.deepspeed))


# --- the YAML's reference to the JSON -----------------------------------------------------------------------


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
    on.

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
    if yaml is None or ctx.deepspeed_reference is None:
        return
    for key in ACCELERATE_FIELDS_REFUSED_WITH_FILE:
        if yaml.has("deepspeed_config", key):
            yield Finding("accelerate", ("deepspeed_config", key),
                          f"`deepspeed_config.{key}` cannot be combined with `deepspeed_config_file`: "
                          "accelerate refuses the config")
    if yaml.has("mixed_precision"):
        yield Finding("accelerate", ("mixed_precision",),
                      f"`mixed_precision: {yaml.get('mixed_precision')}` cannot be combined with "
                      "`deepspeed_config_file`: accelerate refuses the config",
                      "Remove `mixed_precision` and enable `fp16` or `bf16` in the DeepSpeed JSON")


@rule("AW202", "deepspeed-file-not-found", Severity.ERROR, fix="Correct the path, or create the DeepSpeed "
                                                               "JSON")
def deepspeed_file_not_found(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `deepspeed_config_file` that names no file, neither relative to the working directory nor next to
    the YAML.

    ## Why is this bad?
    Each worker process fails when it opens the file, after `accelerate launch` has started all of them.

    ## Example
    ```yaml
    deepspeed_config:
      deepspeed_config_file: configs/ds_zero3.jsn
    ```
    Use instead: `deepspeed_config_file: configs/ds_zero3.json`.
    """
    reference = ctx.deepspeed_reference
    if reference is not None and reference.resolved is None:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_config_file"),
                      f"`deepspeed_config_file` {reference.written!r} does not exist")


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
    deepspeed_config:
      deepspeed_config_file: ds_zero3.json
    ```
    Use instead: `deepspeed_config_file: configs/ds_zero3.json`.
    """
    reference = ctx.deepspeed_reference
    if reference is not None and reference.relative_to_yaml_only:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_config_file"),
                      f"`deepspeed_config_file` {reference.written!r} exists only relative to the YAML "
                      f"({reference.resolved}), not to the working directory")


# --- the shape of the JSON ----------------------------------------------------------------------------------


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
    Use instead: add `"zero_optimization": {"stage": 2}`.
    """
    if _via_accelerate(ctx) and ctx.deepspeed is not None and not ctx.deepspeed.has(ZERO):
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
    """
    if not _via_accelerate(ctx) and ctx.deepspeed is not None and isinstance(ctx.deepspeed.data, dict) \
            and not ctx.deepspeed.has(ZERO):
        yield Finding("deepspeed", (), "no `zero_optimization` block: fine for the `deepspeed` launcher "
                                       "(stage 0), refused by accelerate and the HF Trainer")


@rule("AW229", "stage3-key-given-twice", Severity.ERROR, fix="Keep one of the two spellings")
def stage3_key_given_twice(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a ZeRO setting written under both of its names, such as `stage3_prefetch_bucket_size` and
    `prefetch_bucket_size`, or a deprecated key next to its replacement (`cpu_offload` with
    `offload_optimizer`).

    ## Why is this bad?
    DeepSpeed refuses the file: the short name is rejected as an extra input when the `stage3_` alias is also
    given, and "Cannot provide deprecated parameter 'cpu_offload' and replacing parameter 'offload_optimizer'
    together".

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9, "max_live_parameters": 1e9}}
    ```
    Use instead: only `"stage3_max_live_parameters": 1e9`.
    """
    from accelwiz.config.deepspeed import STAGE3_ALIASES

    zero = ctx.deepspeed.section(ZERO) if ctx.deepspeed is not None else {}
    pairs = [*STAGE3_ALIASES.items(), ("cpu_offload", "offload_optimizer"),
             ("cpu_offload_param", "offload_param"),
             ("stage3_gather_fp16_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save"),
             ("stage3_gather_fp16_weights_on_model_save", "gather_16bit_weights_on_model_save")]
    for first, second in pairs:
        if first in zero and second in zero:
            yield Finding("deepspeed", (ZERO, second),
                          f"`{ZERO}.{first}` and `{ZERO}.{second}` are the same setting; DeepSpeed refuses "
                          "both together")


# --- offload ------------------------------------------------------------------------------------------------


@rule("AW206", "param-offload-below-zero3", Severity.WARNING,
      fix="Set ZeRO stage 3, or set the parameter offload device to `none`")
def param_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds parameter offload (`offload_param` in the JSON, `offload_param_device` in the YAML) with a ZeRO
    stage below 3.

    ## Why is this bad?
    Only the ZeRO-3 optimizer reads `offload_param`. At stages 0-2 DeepSpeed accepts it and silently keeps the
    parameters on the GPU, so the memory the offload was meant to save is not saved (accelerate#2298).

    ## Example
    ```yaml
    deepspeed_config:
      zero_stage: 2
      offload_param_device: cpu
    ```
    Use instead: `zero_stage: 3`, or `offload_param_device: none`.
    """
    effective = ctx.effective
    stage, device = _stage(ctx), effective.offload_param
    if stage is not None and stage < 3 and device.value in ("cpu", "nvme"):
        yield Finding(device.role, device.path,
                      f"parameter offload to `{device.value}` needs ZeRO stage 3 (zero_stage is {stage}); it "
                      "is silently ignored")


@rule("AW207", "nvme-offload-without-path", Severity.ERROR, fix="Set `nvme_path` to a directory on a local "
                                                                "NVMe drive")
def nvme_offload_without_path(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds offload to `nvme` without an `nvme_path` in the DeepSpeed JSON, and NVMe offload set in the YAML's
    inline `deepspeed_config`.

    ## Why is this bad?
    DeepSpeed accepts `nvme_path: null` and crashes when it builds the swapper (`os.path.join(None, ...)`,
    DeepSpeed#2624). Through the YAML it is worse: `accelerate launch` never passes
    `offload_*_nvme_path` to the workers, so DeepSpeed receives the path `"none"` whatever the YAML says.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
    ```
    Use instead: `"offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}`, in a DeepSpeed JSON.
    """
    json = ctx.deepspeed
    if json is not None:
        for block in ("offload_optimizer", "offload_param"):
            section = json.section(ZERO, block)
            if section.get("device") == "nvme" and not section.get("nvme_path"):
                yield Finding("deepspeed", (ZERO, block, "device"),
                              f"`{ZERO}.{block}` offloads to nvme but has no `nvme_path`")
    elif ctx.accelerate is not None:
        for kind in ("optimizer", "param"):
            if ctx.accelerate.get("deepspeed_config", f"offload_{kind}_device") == "nvme":
                yield Finding("accelerate", ("deepspeed_config", f"offload_{kind}_device"),
                              f"NVMe {kind} offload set in the YAML: accelerate never passes "
                              f"`offload_{kind}_nvme_path` to the workers, so DeepSpeed gets the path 'none'",
                              "Move the DeepSpeed settings into a JSON with `nvme_path` and name it in "
                              "`deepspeed_config_file`")


@rule("AW208", "nvme-optimizer-offload-below-zero3", Severity.WARNING,
      fix="Use ZeRO stage 3 for NVMe offload, or offload the optimizer to `cpu`")
def nvme_optimizer_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds optimizer offload to `nvme` with ZeRO stage 1 or 2.

    ## Why is this bad?
    ZeRO-1/2 only check that the offload device is not `none`: the optimizer state goes to CPU memory, not to
    the NVMe drive, so host RAM must hold it ("NVMe offloading is available only with ZeRO stage 3").

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}}
    ```
    Use instead: `"stage": 3`, or `"device": "cpu"`.
    """
    stage, device = _stage(ctx), ctx.effective.offload_optimizer
    if stage in (1, 2) and device.value == "nvme":
        yield Finding(device.role, device.path,
                      f"optimizer offload to nvme at ZeRO stage {stage} silently offloads to CPU memory "
                      "instead")


@rule("AW209", "partial-offload-below-zero3", Severity.ERROR, fix='Remove `ratio`, or use `"stage": 3`')
def partial_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `offload_optimizer.ratio` below 1 (partial, "twin-flow" offload) with a ZeRO stage other than 3.

    ## Why is this bad?
    DeepSpeed refuses the config: "Partial offloading only supported for ZeRO Stage 3."

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}}
    ```
    Use instead: `"stage": 3`, or drop `ratio`.
    """
    ratio = as_float(ctx.deepspeed.get(ZERO, "offload_optimizer", "ratio")) if ctx.deepspeed else None
    stage = _stage(ctx)
    if ratio is not None and ratio < 1.0 and stage is not None and stage != 3:
        yield Finding("deepspeed", (ZERO, "offload_optimizer", "ratio"),
                      f"partial optimizer offload (ratio {ratio}) needs ZeRO stage 3 (zero_stage is {stage})")


@rule("AW210", "partial-offload-to-nvme", Severity.ERROR, fix='Use `"device": "cpu"` (with `"pin_memory": '
                                                              'true`)')
def partial_offload_to_nvme(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `offload_optimizer.ratio` below 1 with the offload device `nvme`.

    ## Why is this bad?
    Partial offload splits the optimizer step between the GPU and DeepSpeedCPUAdam; it works with CPU memory
    only. With NVMe the optimizer fails at initialisation: "RuntimeError: expected input to be on cuda"
    (DeepSpeed#4872; the maintainers' answer: device should be cpu).

    ## Example
    ```json
    {"offload_optimizer": {"device": "nvme", "nvme_path": "/mnt/nvme", "ratio": 0.5}}
    ```
    Use instead: `{"device": "cpu", "pin_memory": true, "ratio": 0.5}`.
    """
    section = ctx.deepspeed.section(ZERO, "offload_optimizer") if ctx.deepspeed else {}
    ratio = as_float(section.get("ratio"))
    if ratio is not None and ratio < 1.0 and section.get("device") == "nvme":
        yield Finding("deepspeed", (ZERO, "offload_optimizer", "ratio"),
                      f"partial optimizer offload (ratio {ratio}) works only with device `cpu`, not `nvme`")


@rule("AW211", "optimizer-offload-at-stage0", Severity.WARNING,
      fix="Use ZeRO stage 1 or higher, or remove the optimizer offload")
def optimizer_offload_at_stage0(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds optimizer offload with ZeRO stage 0 (ZeRO disabled).

    ## Why is this bad?
    DeepSpeed accepts it, but without a ZeRO optimizer nothing reads the offload setting: the optimizer state
    stays on the GPU.

    ## Example
    ```json
    {"zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead: `"stage": 1` or higher.
    """
    device = ctx.effective.offload_optimizer
    if _stage(ctx) == 0 and device.value in ("cpu", "nvme"):
        yield Finding(device.role, device.path,
                      f"optimizer offload to `{device.value}` has no effect at ZeRO stage 0")


# --- batch size and gradient accumulation -------------------------------------------------------------------


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
    {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3}
    ```
    with `num_processes: 8`. Use instead: `"train_batch_size": 48`, or `"auto"`.
    """
    json = ctx.deepspeed
    if json is None or not isinstance(json.data, dict):
        return
    tbs, mbs, gas = (json.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                           "gradient_accumulation_steps"))
    world = as_int(ctx.effective.num_processes.value) if _via_accelerate(ctx) else None
    sequence_parallel = as_int(json.get("sequence_parallel_size"))
    if world is not None and sequence_parallel and sequence_parallel > 1:
        world //= sequence_parallel  # DeepSpeed counts data-parallel ranks only
    if world is not None and world > 0:
        if gas is None:
            gas = 1  # accelerate adds gradient_accumulation_steps: 1 to a JSON without it
        if as_int(tbs) is None or (as_int(mbs) is None and as_int(gas) is None):
            return  # "auto" values are filled consistently by accelerate
        result = deepspeed_batch(tbs, mbs, gas, world)
        if isinstance(result, str) and not result.startswith("Either"):
            yield Finding("deepspeed", ("train_batch_size",), f"{result} (world size is num_processes = "
                                                              f"{world})")
        return
    tbs, mbs, gas = as_int(tbs), as_int(mbs), as_int(gas)
    if tbs and mbs and gas and tbs % (mbs * gas):
        yield Finding("deepspeed", ("train_batch_size",),
                      f"train_batch_size {tbs} is not a multiple of train_micro_batch_size_per_gpu x "
                      f"gradient_accumulation_steps ({mbs} x {gas} = {mbs * gas}): DeepSpeed's batch check "
                      "fails for every world size")


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
    deepspeed_config:
      gradient_accumulation_steps: 1
      deepspeed_config_file: ds_config.json   # "gradient_accumulation_steps": 10
    ```
    Use instead: only `"gradient_accumulation_steps": 10` in the JSON.
    """
    if ctx.accelerate is None or ctx.deepspeed is None:
        return
    in_yaml = as_int(ctx.accelerate.get("deepspeed_config", "gradient_accumulation_steps"))
    in_json = as_int(ctx.deepspeed.get("gradient_accumulation_steps"))
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
    deepspeed_config:
      gradient_accumulation_steps: 1
    ```
    Use instead: leave it out and pass `Accelerator(gradient_accumulation_steps=8)`, or `"auto"` in the JSON.
    """
    json, yaml = ctx.deepspeed, ctx.accelerate
    if json is not None and isinstance(json.data, dict):
        if not _hf_launched(ctx):
            return  # for the plain `deepspeed` launcher the JSON is the only place to set it
        value = as_int(json.get("gradient_accumulation_steps"))
        if value is not None:
            yield Finding("deepspeed", ("gradient_accumulation_steps",),
                          f"gradient_accumulation_steps is fixed at {value}; it overrides the training "
                          "script's value (a different TrainingArguments value is refused)")
        elif yaml is not None and not json.has("gradient_accumulation_steps"):
            yield Finding("deepspeed", (), "the DeepSpeed JSON has no gradient_accumulation_steps: "
                                           "accelerate sets it to 1, overriding "
                                           "Accelerator(gradient_accumulation_steps=...)")
    elif yaml is not None and ctx.effective.uses_deepspeed and ctx.deepspeed_reference is None:
        value = as_int(yaml.get("deepspeed_config", "gradient_accumulation_steps"))
        if value is not None:
            yield Finding("accelerate", ("deepspeed_config", "gradient_accumulation_steps"),
                          f"gradient_accumulation_steps is fixed at {value} in the YAML; it overrides "
                          "Accelerator(gradient_accumulation_steps=...) and must equal the Trainer's value")


@rule("AW228", "implicit-gradient-clipping", Severity.INFO,
      fix="Write the clipping value explicitly; 0.0 disables clipping")
def implicit_gradient_clipping(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds DeepSpeed runs through accelerate whose gradient clipping is not written as a number: `"auto"`, or
    no `gradient_clipping` at all.

    ## Why is this bad?
    accelerate fills `"auto"` with 1.0, and answering "no clipping" in `accelerate config` writes nothing,
    which also ends as 1.0 (accelerate#3807, PR #2791); DeepSpeed's own default is 1.0 since 0.19.3 and was
    0.0 before. The run clips at 1.0 although no file says so.

    ## Example
    ```json
    {"gradient_clipping": "auto"}
    ```
    Use instead: `"gradient_clipping": 1.0`, or `0.0` for no clipping.
    """
    clipping = ctx.effective.gradient_clipping
    if _via_accelerate(ctx) and ctx.effective.uses_deepspeed and clipping.source in ("derived",
                                                                                     "deepspeed default"):
        where = "is \"auto\"" if clipping.path else "is not set"
        if clipping.role is not None:
            role, path = clipping.role, clipping.path
        else:
            in_json = ctx.deepspeed is not None
            role, path = ("deepspeed", ()) if in_json else ("accelerate", ("deepspeed_config",))
        yield Finding(role, path, f"gradient_clipping {where}: the run clips gradients at norm 1.0")


# --- ZeRO settings ------------------------------------------------------------------------------------------


@rule("AW216", "zero3-init-flag-below-zero3", Severity.WARNING, fix="Remove `zero3_init_flag`, or use ZeRO "
                                                                    "stage 3")
def zero3_init_flag_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero3_init_flag: true` in the YAML with a ZeRO stage other than 3.

    ## Why is this bad?
    `deepspeed.zero.Init` partitions the model while it is created, which only ZeRO-3 supports; accelerate
    warns "DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False." and loads a
    full copy on every rank (accelerate#2079).

    ## Example
    ```yaml
    deepspeed_config:
      zero_stage: 2
      zero3_init_flag: true
    ```
    Use instead: `zero3_init_flag: false` (or `zero_stage: 3`).
    """
    yaml, stage = ctx.accelerate, _stage(ctx)
    if yaml is not None and yaml.get("deepspeed_config", "zero3_init_flag") is True and stage is not None \
            and stage != 3:
        yield Finding("accelerate", ("deepspeed_config", "zero3_init_flag"),
                      f"`zero3_init_flag` only applies to ZeRO stage 3 (zero_stage is {stage}); accelerate "
                      "turns it off")


@rule("AW217", "zero3-without-init-flag", Severity.INFO, fix="Set `zero3_init_flag: true`")
def zero3_without_init_flag(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds ZeRO stage 3 with `zero3_init_flag: false` in the YAML.

    ## Why is this bad?
    Without `deepspeed.zero.Init` every rank first loads the whole model into memory and only then partitions
    it: a large model runs out of host or GPU memory while loading (accelerate#2079, trl#4100).

    ## Example
    ```yaml
    deepspeed_config:
      zero_stage: 3
      zero3_init_flag: false
    ```
    Use instead: `zero3_init_flag: true`.
    """
    yaml = ctx.accelerate
    if yaml is not None and _stage(ctx) == 3 and yaml.get("deepspeed_config", "zero3_init_flag") is False:
        yield Finding("accelerate", ("deepspeed_config", "zero3_init_flag"),
                      "ZeRO-3 without `zero3_init_flag`: every rank loads a full copy of the model before it "
                      "is partitioned")


@rule("AW218", "reduce-bucket-size-zero", Severity.ERROR, fix="Leave `reduce_bucket_size` out, or use a "
                                                              "positive size")
def reduce_bucket_size_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.reduce_bucket_size: 0`.

    ## Why is this bad?
    DeepSpeed before 0.19.8 accepted it and then divided by it during the backward pass (`ZeroDivisionError`,
    DeepSpeed#8260); 0.19.8 refuses it at startup ("Input should be greater than 0").

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "reduce_bucket_size": 0}}
    ```
    Use instead: `"reduce_bucket_size": 5e8` (the default).
    """
    if ctx.deepspeed is not None and as_int(ctx.deepspeed.get(ZERO, "reduce_bucket_size")) == 0:
        yield Finding("deepspeed", (ZERO, "reduce_bucket_size"),
                      "`reduce_bucket_size` is 0: DeepSpeed divides by it (ZeroDivisionError) or, from "
                      "0.19.8, refuses it")


@rule("AW219", "gradient-allreduce-sum-with-zero3", Severity.ERROR,
      fix='Use `"gradient_allreduce_op": "mean"` (the default)')
def gradient_allreduce_sum_with_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gradient_allreduce_op: "sum"` with ZeRO stage 3 or ZenFlow.

    ## Why is this bad?
    DeepSpeed refuses it: "gradient_allreduce_op='sum' is not supported with ZeRO stage 3" (resp. ZenFlow).

    ## Example
    ```json
    {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}
    ```
    Use instead: `"mean"`.
    """
    json = ctx.deepspeed
    if json is None or json.get("gradient_allreduce_op") != "sum":
        return
    if _stage(ctx) == 3:
        yield Finding("deepspeed", ("gradient_allreduce_op",),
                      "gradient_allreduce_op 'sum' is not supported with ZeRO stage 3")
    elif json.section(ZERO, "zenflow"):
        yield Finding("deepspeed", ("gradient_allreduce_op",), "gradient_allreduce_op 'sum' is not supported "
                                                               "with "
                                                                 "ZenFlow")


@rule("AW220", "compute-grad-norm-disabled-unsupported", Severity.ERROR,
      fix="Remove `compute_grad_norm: false`, or use ZeRO-1/2 with gradient_clipping 0 and no optimizer "
          "offload")
def compute_grad_norm_disabled_unsupported(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.compute_grad_norm: false` where DeepSpeed 0.19.8 does not allow it: ZeRO stage 0
    or 3, gradient clipping above 0 (the default is 1.0), optimizer offload, or ZenFlow.

    ## Why is this bad?
    DeepSpeed refuses it: "compute_grad_norm=false is supported only with ZeRO Stage 1 or 2", or at engine
    start "zero_optimization.compute_grad_norm=false requires gradient_clipping=0".

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}}
    ```
    Use instead: add `"gradient_clipping": 0.0`, or drop `compute_grad_norm`.
    """
    json = ctx.deepspeed
    if json is None or json.get(ZERO, "compute_grad_norm") is not False:
        return
    stage, clipping = _stage(ctx), ctx.effective.gradient_clipping.value
    path = (ZERO, "compute_grad_norm")
    if stage in (0, 3):
        yield Finding("deepspeed", path, f"compute_grad_norm=false is supported only with ZeRO stage 1 or 2 "
                                         f"(zero_stage is {stage})")
    elif isinstance(clipping, float) and clipping > 0:
        yield Finding("deepspeed", path, "compute_grad_norm=false requires gradient_clipping 0 (it is "
                                         f"{clipping})")
    elif ctx.effective.offload_optimizer.value in ("cpu", "nvme") or json.section(ZERO, "zenflow"):
        yield Finding("deepspeed", path, "compute_grad_norm=false does not work with optimizer offload or "
                                         "ZenFlow")


@rule("AW230", "legacy-stage1", Severity.ERROR, fix="Remove `legacy_stage1`")
def legacy_stage1(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `zero_optimization.legacy_stage1: true`.

    ## Why is this bad?
    DeepSpeed raises at engine start: "The deprecated version of ZeRO Stage 1 is not supported in deepspeed >=
    0.5.9".

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "legacy_stage1": true}}
    ```
    Use instead: `{"zero_optimization": {"stage": 1}}`.
    """
    if ctx.deepspeed is not None and ctx.deepspeed.get(ZERO, "legacy_stage1") is True:
        yield Finding("deepspeed", (ZERO, "legacy_stage1"), "the legacy ZeRO stage 1 implementation was "
                                                            "removed")


@rule("AW231", "gradient-prescale-with-zero", Severity.ERROR,
      fix="Remove `prescale_gradients` / `gradient_predivide_factor`")
def gradient_prescale_with_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `prescale_gradients: true` or `gradient_predivide_factor` other than 1.0 with ZeRO-2
    (reduce-scatter, the default) or ZeRO-3.

    ## Why is this bad?
    The ZeRO optimizer refuses it when it is built: "pre-scale gradients is not yet supported with ZeRO-2 with
    reduce scatter enabled" / "gradient_predivide_factor != 1.0 is not yet supported with ZeRO-2 ...".

    ## Example
    ```json
    {"prescale_gradients": true, "zero_optimization": {"stage": 2}}
    ```
    Use instead: drop `prescale_gradients`.
    """
    json, stage = ctx.deepspeed, _stage(ctx)
    if json is None or stage not in (2, 3):
        return
    if stage == 2 and json.get(ZERO, "reduce_scatter") is False:
        return
    factor = as_float(json.get("gradient_predivide_factor"))
    if json.get("prescale_gradients") is True:
        yield Finding("deepspeed", ("prescale_gradients",), "prescale_gradients is not supported with "
                                                            f"ZeRO-{stage}")
    if factor is not None and factor != 1.0:
        yield Finding("deepspeed", ("gradient_predivide_factor",),
                      f"gradient_predivide_factor {factor} is not supported with ZeRO-{stage}")


@rule("AW224", "pipeline-with-zero-partitioned-gradients", Severity.WARNING,
      fix="Use ZeRO stage 0 or 1 with pipeline parallelism")
def pipeline_with_zero_partitioned_gradients(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `pipeline` block together with ZeRO stage 2 or 3.

    ## Why is this bad?
    If the model is a `PipelineModule` (which the `pipeline` block is for), DeepSpeed refuses the combination:
    "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".

    ## Example
    ```json
    {"pipeline": {"stages": 4}, "zero_optimization": {"stage": 2}}
    ```
    Use instead: `"stage": 1`.
    """
    stage = _stage(ctx)
    if ctx.deepspeed is not None and ctx.deepspeed.has("pipeline") and stage in (2, 3):
        yield Finding("deepspeed", ("pipeline",), "pipeline parallelism does not work with ZeRO stage "
                                                  f"{stage}")


# --- optimizer and scheduler --------------------------------------------------------------------------------


@rule("AW221", "optimizer-max-grad-norm", Severity.ERROR, fix='Move it to the top-level "gradient_clipping"')
def optimizer_max_grad_norm(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `max_grad_norm` in `optimizer.params`.

    ## Why is this bad?
    DeepSpeed refuses it when the engine starts: "'max_grad_norm' is not supported as an optimizer parameter,
    please switch to using the deepspeed parameter 'gradient_clipping'".

    ## Example
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "max_grad_norm": 1.0}}}
    ```
    Use instead: `"gradient_clipping": 1.0` at the top level.
    """
    if ctx.deepspeed is not None and ctx.deepspeed.has("optimizer", "params", "max_grad_norm"):
        yield Finding("deepspeed", ("optimizer", "params", "max_grad_norm"),
                      "`optimizer.params.max_grad_norm` is refused by DeepSpeed; clipping is "
                      "`gradient_clipping`")


@rule("AW222", "unknown-optimizer-type", Severity.ERROR,
      fix="Use a DeepSpeed optimizer (Adam, AdamW, Lamb, Lion, Adagrad, ...) or an exact torch.optim class "
          "name")
def unknown_optimizer_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an `optimizer.type` that is neither a DeepSpeed optimizer (any case: `adam`, `adamw`, `lamb`,
    `lion`, `adagrad`, `muon`, ...) nor an exact `torch.optim` class name (`SGD`, `RMSprop`, ...).

    ## Why is this bad?
    The config loads, and the engine fails after the model is built: "FooOpt is not a supported DeepSpeed
    Optimizer".

    ## Example
    ```json
    {"optimizer": {"type": "AdamWeightDecay", "params": {"lr": 1e-4}}}
    ```
    Use instead: `"type": "AdamW"`.
    """
    name = ctx.deepspeed.get("optimizer", "type") if ctx.deepspeed is not None else None
    if isinstance(name, str) and name.lower() not in DEEPSPEED_OPTIMIZERS and name not in TORCH_OPTIMIZERS:
        hint = next((f"Use `{t}` (torch.optim names are case-sensitive)" for t in TORCH_OPTIMIZERS
                     if t.lower() == name.lower()), None)
        yield Finding("deepspeed", ("optimizer", "type"), f"`{name}` is not a DeepSpeed or torch.optim "
                                                          "optimizer",
                      hint)


@rule("AW223", "unknown-scheduler-type", Severity.ERROR, fix="Use one of " + ", ".join(DEEPSPEED_SCHEDULERS))
def unknown_scheduler_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `scheduler.type` that DeepSpeed does not know (`LRRangeTest`, `OneCycle`, `WarmupLR`,
    `WarmupDecayLR`, `WarmupCosineLR`; exact case).

    ## Why is this bad?
    The engine fails after the model is built: "DeepSpeed does not recognize LR scheduler FooLR".

    ## Example
    ```json
    {"scheduler": {"type": "CosineAnnealing"}}
    ```
    Use instead: `"type": "WarmupCosineLR"`.
    """
    name = ctx.deepspeed.get("scheduler", "type") if ctx.deepspeed is not None else None
    if isinstance(name, str) and name not in DEEPSPEED_SCHEDULERS:
        yield Finding("deepspeed", ("scheduler", "type"), f"`{name}` is not a DeepSpeed LR scheduler")


# --- "auto" -------------------------------------------------------------------------------------------------


def _unfilled_autos(ctx: CheckContext) -> Iterator[KeyPath]:
    """"auto" values that neither accelerate nor the HF Trainer fills."""
    if ctx.deepspeed is None:
        return
    for path in _autos(ctx.deepspeed.data):
        if _dotted(path) not in FILLED_BY_ACCELERATE | FILLED_BY_TRAINER_ONLY:
            yield path


def _filled_name(path: KeyPath) -> str | None:
    """For a short ZeRO name whose `stage3_` spelling accelerate fills, that spelling."""
    from accelwiz.config.deepspeed import STAGE3_ALIASES

    if len(path) == 2 and path[0] == ZERO:
        alias = next((a for a, short in STAGE3_ALIASES.items() if short == path[1]), None)
        if alias and f"{ZERO}.{alias}" in FILLED_BY_ACCELERATE:
            return alias
    if path == ("bfloat16", "enabled"):
        return "bf16.enabled"
    return None


@rule("AW225", "auto-without-resolver", Severity.ERROR, fix='Replace "auto" with a value')
def auto_without_resolver(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` on a key that neither accelerate nor the HF Trainer fills, in a DeepSpeed JSON used through
    accelerate or written for it (it uses `"auto"` on the keys they do fill). Among them: `"auto"` under the
    short ZeRO names (`prefetch_bucket_size`, `param_persistence_threshold`), which are filled only under
    their `stage3_` names, and the legacy `bfloat16` block.

    ## Why is this bad?
    `"auto"` is not a DeepSpeed value. accelerate replaces the keys it knows and refuses every other `"auto"`
    in `prepare()`, after the model is loaded: "`zero_optimization.prefetch_bucket_size` not found in kwargs.
    Please specify `zero_optimization.prefetch_bucket_size` without `auto`" (axolotl#2964).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "prefetch_bucket_size": "auto"}}
    ```
    Use instead: `"stage3_prefetch_bucket_size": "auto"`, or a number.
    """
    if not _hf_launched(ctx):
        return
    for path in _unfilled_autos(ctx):
        dotted, filled = _dotted(path), _filled_name(path)
        if filled:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto", but accelerate and the HF Trainer only '
                                             'fill '
                                             f"`{filled}`: prepare() fails", f"Rename the key to `{filled}`")
        else:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto", which neither accelerate nor the HF '
                                             'Trainer fills: prepare() fails with "not found in kwargs"')


@rule("AW226", "auto-dropped-by-deepspeed", Severity.WARNING, fix='Replace "auto" with the value you want')
def auto_dropped_by_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` in a DeepSpeed JSON meant for the plain `deepspeed` launcher (checked alone, with no
    `"auto"` on the keys Hugging Face fills), on a key nothing fills.

    ## Why is this bad?
    DeepSpeed never resolves `"auto"`. Inside its validated blocks (`zero_optimization`, `fp16`, `bf16`, ...)
    it silently drops the value and uses the default (`"stage": "auto"` becomes stage 0); elsewhere the string
    reaches the code that uses the value and fails there. Through accelerate or the HF Trainer the same file
    is refused.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto"}}
    ```
    Use instead: `"stage3_max_live_parameters": 1e9` (the default that DeepSpeed used).
    """
    if _hf_launched(ctx):
        return
    for path in _unfilled_autos(ctx):
        if _dotted(path) in DEEPSPEED_NATIVE_AUTO:
            continue
        dotted = _dotted(path)
        if path[0] in PYDANTIC_BLOCKS:
            default = _schema_default(path)
            shown = f"its default {default!r}" if default is not None else "its default"
            yield Finding("deepspeed", path, f'`{dotted}` is "auto": DeepSpeed drops it and uses {shown}')
        else:
            yield Finding("deepspeed", path, f'`{dotted}` is "auto": DeepSpeed passes the string on '
                                             'unresolved')


def _schema_default(path: KeyPath) -> Any:
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.config.validate import model_at

    section = model_at(DeepSpeedConfig, path[:-1])
    if section is None:
        return None
    for name, info in section.model_fields.items():
        if path[-1] in (name, info.alias):
            return None if info.is_required() else info.default
    return None


@rule("AW227", "auto-needs-trainer", Severity.INFO,
      fix="Write the value, unless the script uses the HF Trainer")
def auto_needs_trainer(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `"auto"` on keys that only the HF Trainer fills (`optimizer.params.betas`, `optimizer.params.eps`),
    in a DeepSpeed JSON used through an Accelerate YAML.

    ## Why is this bad?
    The Trainer fills them from `adam_beta1/2` and `adam_epsilon`; a plain accelerate training loop cannot,
    and `prepare()` fails: "`optimizer.params.betas` not found in kwargs".

    ## Example
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto"}}}
    ```
    Use instead: `"betas": [0.9, 0.999]` when the script is a plain accelerate loop.
    """
    if not _via_accelerate(ctx) or ctx.deepspeed is None:
        return
    for path in _autos(ctx.deepspeed.data):
        if _dotted(path) in FILLED_BY_TRAINER_ONLY:
            yield Finding("deepspeed", path, f'`{_dotted(path)}` is "auto", which only the HF Trainer fills; '
                                             'a plain '
                                             "accelerate loop fails in prepare()")


@rule("AW232", "hidden-size-auto-below-zero3", Severity.INFO,
      fix="Write the bucket sizes as numbers, or leave the ZeRO-3 keys out below stage 3")
def hidden_size_auto_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds the bucket sizes that are filled from the model's hidden size (`reduce_bucket_size`,
    `stage3_prefetch_bucket_size`, `stage3_param_persistence_threshold`) written as `"auto"` with a ZeRO stage
    below 3.

    ## Why is this bad?
    transformers up to 4.17 filled them only for ZeRO-3 and DeepSpeed then failed on the string
    (transformers#16495); accelerate and current transformers fill all three at any stage, from
    `model.config.hidden_size`, and fail for a model without it. The two `stage3_` keys do nothing below stage
    3.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}}
    ```
    Use instead: `"reduce_bucket_size": 5e8`.
    """
    stage = _stage(ctx)
    if ctx.deepspeed is None or stage is None or stage >= 3:
        return
    for key in HIDDEN_SIZE_KEYS:
        path = tuple(key.split("."))
        if ctx.deepspeed.get(*path) == AUTO:
            effect = (f"a ZeRO-3 setting, unused at stage {stage}" if path[-1] != "reduce_bucket_size"
                      else "older transformers (<= 4.17) leave it unfilled below ZeRO-3")
            yield Finding("deepspeed", path, f'`{key}` is "auto" at ZeRO stage {stage}: {effect}')


# --- precision (AW401-AW419) --------------------------------------------------------------------------------


def _json_precisions(json: Document) -> dict[str, KeyPath]:
    """The half precisions the JSON enables explicitly (true, or a string DeepSpeed reads as true)."""
    found: dict[str, KeyPath] = {}
    if enabled(json.get("fp16", "enabled")):
        found["fp16"] = ("fp16", "enabled")
    bf16_block = "bf16" if json.has("bf16") else "bfloat16"  # DeepSpeed reads `bfloat16` only without `bf16`
    if enabled(json.get(bf16_block, "enabled")):
        found["bf16"] = (bf16_block, "enabled")
    return found


def _precision_is_auto(json: Document) -> bool:
    """Whether the launcher or the Trainer decides the precision ("enabled": "auto")."""
    return any(json.get(block, "enabled") == AUTO for block in ("fp16", "bf16", "bfloat16"))


@rule("AW401", "fp16-and-bf16-enabled", Severity.ERROR, fix="Enable only one of `fp16` and `bf16`")
def fp16_and_bf16_enabled(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON that enables both `fp16` and `bf16`.

    ## Why is this bad?
    DeepSpeed refuses it: "bfloat16 and fp16 modes cannot be simultaneously enabled".

    ## Example
    ```json
    {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
    ```
    Use instead: `"bf16": {"enabled": true}` alone (or `"auto"` for both with the HF Trainer).
    """
    if ctx.deepspeed is None:
        return
    found = _json_precisions(ctx.deepspeed)
    if len(found) == 2:
        yield Finding("deepspeed", found["bf16"], "fp16 and bf16 are both enabled; DeepSpeed allows only one")


@rule("AW402", "mixed-precision-disagrees-with-deepspeed", Severity.ERROR,
      fix="Declare the precision once: in the DeepSpeed JSON, with `mixed_precision` left out of the YAML")
def mixed_precision_disagrees_with_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `mixed_precision` (in the Accelerate YAML, or misplaced inside the DeepSpeed JSON) that disagrees
    with the `fp16`/`bf16` block the JSON enables.

    ## Why is this bad?
    accelerate refuses it: "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the
    DeepSpeed config file." (transformers#39849). With `mixed_precision: 'no'` the run silently trains in the
    JSON's precision; a `mixed_precision` key inside the JSON is ignored by DeepSpeed altogether
    (DeepSpeed#3024).

    ## Example
    ```yaml
    mixed_precision: bf16   # the JSON has "fp16": {"enabled": true}
    ```
    Use instead: remove `mixed_precision`, or make the JSON say `"fp16": {"enabled": "auto"}`.
    """
    if ctx.deepspeed is None:
        return
    found = _json_precisions(ctx.deepspeed)
    if not found:
        return
    declared: list[tuple[Document | None, Role]] = [(ctx.accelerate, "accelerate"),
                                                    (ctx.deepspeed, "deepspeed")]
    for document, role in declared:
        wanted = document.get("mixed_precision") if document is not None else None
        if not isinstance(wanted, str):
            continue
        expected = "bf16" if wanted == "fp8" else wanted
        if expected not in found:
            shown = " and ".join(found)
            yield Finding(role, ("mixed_precision",),
                          f"`mixed_precision: {wanted}` disagrees with the DeepSpeed JSON, which enables "
                          f"{shown}")


@rule("AW403", "hardcoded-deepspeed-precision", Severity.INFO,
      fix='Write `"enabled": "auto"` so the launcher or the Trainer decides, or keep both sides in step')
def hardcoded_deepspeed_precision(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed JSON that enables `fp16` or `bf16` literally while no Accelerate YAML declares the same
    `mixed_precision`.

    ## Why is this bad?
    The precision is decided in two places. A launcher flag or Trainer argument asking for the other one
    (`--mixed_precision bf16`, `TrainingArguments(bf16=True)`, or a library default) is refused:
    "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file"
    (transformers#39849); with the HF Trainer, `"fp16": "auto"` plus a hard-coded bf16 enables both when run
    with `--fp16`.

    ## Example
    ```json
    {"fp16": {"enabled": true}}
    ```
    Use instead: `{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}`.
    """
    if ctx.deepspeed is None:
        return
    declared = ctx.accelerate.get("mixed_precision") if ctx.accelerate is not None else None
    for precision, path in _json_precisions(ctx.deepspeed).items():
        if declared is None:
            yield Finding("deepspeed", path, f"{precision} is fixed in the DeepSpeed JSON; a launcher or "
                                             "Trainer asking for another precision is refused")


@rule("AW404", "communication-dtype-differs-from-training", Severity.WARNING,
      fix="Remove `communication_data_type`, or enable the matching `fp16`/`bf16` block")
def communication_dtype_differs_from_training(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `communication_data_type` set to `fp16` or `bf16` while the JSON trains in another precision (fp32
    when neither `fp16` nor `bf16` is enabled).

    ## Why is this bad?
    The gradient buckets are built for the training dtype; reducing them in another dtype is a path DeepSpeed
    barely tests. With ZeRO-1/2 and an fp32 model it crashed ("KeyError: torch.float32", then "start (0) +
    length (16384) exceeds dimension size (10000)", DeepSpeed#7653). It also reduces gradients at lower
    precision than the model trains with.

    ## Example
    ```json
    {"communication_data_type": "bf16", "zero_optimization": {"stage": 1}}
    ```
    Use instead: drop `communication_data_type`, or add `"bf16": {"enabled": true}`.
    """
    json = ctx.deepspeed
    if json is None:
        return
    wanted = json.get("communication_data_type")
    if wanted not in ("fp16", "bf16") or _precision_is_auto(json):
        return
    found = _json_precisions(json)
    training = next(iter(found), "fp32")
    if wanted not in found:
        yield Finding("deepspeed", ("communication_data_type",),
                      f"communication_data_type is {wanted} but the model trains in {training}")


@rule("AW405", "bf16-with-zero-stage0", Severity.INFO, fix="Use ZeRO stage 1 or higher on DeepSpeed older "
                                                           "than 0.7")
def bf16_with_zero_stage0(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `bf16` enabled with ZeRO stage 0.

    ## Why is this bad?
    Current DeepSpeed supports it, but releases of early 2022 refused it: "bfloat16 mode is only enabled for
    Zero 1,2,3 currently" (DeepSpeed#1784), and the bf16 + ZeRO-0 gradient-norm path had bugs fixed only
    later. The config is version-dependent.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}
    ```
    Use instead: `"stage": 1` when the cluster runs an old DeepSpeed.
    """
    if ctx.deepspeed is None or _stage(ctx) != 0:
        return
    path = _json_precisions(ctx.deepspeed).get("bf16")
    if path is not None:
        yield Finding("deepspeed", path, "bf16 with ZeRO stage 0 needs a recent DeepSpeed (older releases "
                                         "refuse it)")


@rule("AW406", "bf16-optimizer-states-without-master-weights", Severity.ERROR,
      fix='Add `"bf16_master_weights_and_grads": true`, or remove `bf16_optimizer_states`')
def bf16_optimizer_states_without_master_weights(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `bf16.bf16_optimizer_states: true` without `bf16.bf16_master_weights_and_grads: true`.

    ## Why is this bad?
    DeepSpeed refuses it: "bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled."

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_optimizer_states": true}}
    ```
    Use instead: also set `"bf16_master_weights_and_grads": true`.
    """
    bf16 = ctx.deepspeed.section("bf16") if ctx.deepspeed is not None else {}
    if bf16.get("bf16_optimizer_states") is True and bf16.get("bf16_master_weights_and_grads") is not True:
        yield Finding("deepspeed", ("bf16", "bf16_optimizer_states"),
                      "bf16_optimizer_states requires bf16_master_weights_and_grads")


@rule("AW407", "master-weights-without-zero", Severity.ERROR, fix="Use ZeRO stage 1, 2 or 3")
def master_weights_without_zero(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fp16_master_weights_and_grads`, `bf16_master_weights_and_grads` or `bf16_optimizer_states` with
    ZeRO stage 0.

    ## Why is this bad?
    DeepSpeed refuses it: "Bf16_master_weights_and_grads is only supported with ZeRO Stage 1, 2, or 3."

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 0}}
    ```
    Use instead: `"stage": 2`.
    """
    json = ctx.deepspeed
    if json is None or _stage(ctx) != 0:
        return
    for path in (("fp16", "fp16_master_weights_and_grads"), ("bf16", "bf16_master_weights_and_grads"),
                 ("bf16", "bf16_optimizer_states")):
        if json.get(*path) is True:
            yield Finding("deepspeed", path, f"`{_dotted(path)}` needs ZeRO stage 1, 2 or 3 "
                                             "(zero_stage is 0)")


@rule("AW408", "fp16-loss-scale-invalid", Severity.ERROR, fix="Use loss_scale >= 0 and positive window and "
                                                              "minimum")
def fp16_loss_scale_invalid(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds fp16 loss-scaling values DeepSpeed refuses: a negative `loss_scale`, or with dynamic scaling
    (`loss_scale: 0`) a `loss_scale_window` or `min_loss_scale` that is not positive.

    ## Why is this bad?
    DeepSpeed refuses the config: "fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)",
    "fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled (loss_scale=0)",
    "fp16.min_loss_scale must be > 0 ...". A window of 0 would divide by zero in the loss scaler.

    ## Example
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 0}}
    ```
    Use instead: `"min_loss_scale": 1`.
    """
    fp16 = ctx.deepspeed.section("fp16") if ctx.deepspeed is not None else {}
    scale = as_float(fp16.get("loss_scale", 0))
    if scale is not None and scale < 0:
        yield Finding("deepspeed", ("fp16", "loss_scale"), f"fp16.loss_scale is {scale}; it must be >= 0")
    if scale == 0 and (enabled(fp16.get("enabled")) or fp16.get("enabled") == AUTO):
        for key in ("loss_scale_window", "min_loss_scale"):
            value = as_float(fp16.get(key))
            if value is not None and value <= 0:
                yield Finding("deepspeed", ("fp16", key),
                              f"fp16.{key} is {value:g}; it must be > 0 with dynamic loss scaling")


@rule("AW409", "param-dtype-conflicts-with-precision", Severity.ERROR,
      fix="Remove `data_types.param_dtype`, or enable the matching `fp16`/`bf16` block")
def param_dtype_conflicts_with_precision(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `data_types.param_dtype` that differs from the precision the JSON enables (fp32 when neither `fp16`
    nor `bf16` is enabled).

    ## Why is this bad?
    The engine refuses it at start: "data_types.param_dtype='bf16' conflicts with the enabled precision mode".

    ## Example
    ```json
    {"data_types": {"param_dtype": "bf16"}, "fp16": {"enabled": true}}
    ```
    Use instead: `"param_dtype": "fp16"`, or leave it out.
    """
    json = ctx.deepspeed
    wanted = json.get("data_types", "param_dtype") if json is not None else None
    if not isinstance(wanted, str) or _precision_is_auto(json):
        return
    training = next(iter(_json_precisions(json)), "fp32")
    if wanted in ("fp16", "bf16", "fp32") and wanted != training:
        yield Finding("deepspeed", ("data_types", "param_dtype"),
                      f"data_types.param_dtype is {wanted} but the model trains in {training}")


@rule("AW233", "autotuning-arg-mapping-unknown-key", Severity.WARNING,
      fix="Write the DeepSpeed key exactly as it appears at the top level of the config")
def autotuning_arg_mapping_unknown_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds keys in `autotuning.arg_mappings` that are not DeepSpeed config keys, such as a key with a trailing
    space.

    ## Why is this bad?
    The autotuner looks each tuned DeepSpeed key up in `arg_mappings` by its exact name to pass the value to
    the training script's argument; a misspelt key is never matched, so the script keeps its own value and
    every experiment runs with the same setting.

    ## Example
    ```json
    {"autotuning": {"arg_mappings": {"gradient_accumulation_steps ": "--gradient_accumulation_steps"}}}
    ```
    Use instead: `"gradient_accumulation_steps": "--gradient_accumulation_steps"`.
    """
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.config.validate import known_keys

    mappings = ctx.deepspeed.section("autotuning", "arg_mappings") if ctx.deepspeed is not None else {}
    known = set(known_keys(DeepSpeedConfig))
    for key in mappings:
        if key not in known:
            shown = f"`{key}` (with stray whitespace)" if key.strip() in known else f"`{key}`"
            yield Finding("deepspeed", ("autotuning", "arg_mappings", key),
                          f"autotuning.arg_mappings maps {shown}, which is not a DeepSpeed config key")
