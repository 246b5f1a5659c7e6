"""AW221-AW223, AW233, AW237: the optimizer, LR scheduler and autotuner blocks of the DeepSpeed JSON."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

DEEPSPEED_OPTIMIZERS = frozenset({"adagrad", "adam", "adamw", "lamb", "lion", "muon", "muadam", "muadamw",
                                  "musgd"})

# `torch.optim` attribute names DeepSpeed also accepts (exact case); a test checks this list against torch.
TORCH_OPTIMIZERS = frozenset({"ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
                              "Muon", "NAdam", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam"})

DEEPSPEED_SCHEDULERS = ("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR")


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
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "gradient_clipping": 1.0}
    ```
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
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
    ```
    """
    name = ctx.effective.optimizer_type.value
    if name is not None and name.lower() not in DEEPSPEED_OPTIMIZERS and name not in TORCH_OPTIMIZERS:
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
    ```json
    {"scheduler": {"type": "WarmupCosineLR"}}
    ```
    """
    name = ctx.effective.scheduler_type.value
    if name is not None and name not in DEEPSPEED_SCHEDULERS:
        yield Finding("deepspeed", ("scheduler", "type"), f"`{name}` is not a DeepSpeed LR scheduler")


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
    ```json
    {"autotuning": {"arg_mappings": {"gradient_accumulation_steps": "--gradient_accumulation_steps"}}}
    ```
    """
    mappings = ctx.deepspeed.section("autotuning", "arg_mappings") if ctx.deepspeed is not None else {}
    if not mappings:
        return  # the DeepSpeed models are built only for a file that has something to look up (check start-up)
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.config.validate import known_keys

    known = set(known_keys(DeepSpeedConfig))
    for key in mappings:
        if key not in known:
            shown = f"`{key}` (with stray whitespace)" if key.strip() in known else f"`{key}`"
            yield Finding("deepspeed", ("autotuning", "arg_mappings", key),
                          f"autotuning.arg_mappings maps {shown}, which is not a DeepSpeed config key")


@rule("AW237", "offload-without-optimizer-block", Severity.WARNING,
      fix='Add an "optimizer" block (DeepSpeed then builds DeepSpeedCPUAdam), or pass '
          'deepspeed.ops.adam.DeepSpeedCPUAdam to deepspeed.initialize')
def offload_without_optimizer_block(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds optimizer offload to `cpu` or `nvme` in a DeepSpeed JSON that has no `optimizer` block and keeps
    `zero_force_ds_cpu_optimizer` at its default (true), where DeepSpeed's own reader may read the JSON: checked
    alone, with no Accelerate YAML, no Trainer arguments and no "auto" only they fill.

    ## Why is this bad?
    With no `optimizer` block the script's own optimizer is the one trained. `deepspeed.initialize(optimizer=...)`
    refuses anything but DeepSpeedCPUAdam/DeepSpeedCPULion under ZeRO-Offload: "ZeRORuntimeException: You are
    using ZeRO-Offload with a client provided optimizer (<class 'torch.optim.adamw.AdamW'>) ..."
    (runtime/engine.py `_configure_optimizer`), after the model is built, on every rank. Through accelerate or
    the HF Trainer the same file runs: accelerate swaps the torch optimizer for DeepSpeedCPUAdam
    (`map_pytorch_optim_to_deepspeed`; AW707 says when that changes the update), so this rule stays silent there.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead: an `optimizer` block, so that DeepSpeed builds its CPU Adam.
    ```json
    {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
     "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
    ```
    """
    from accelwiz.rules.deepspeed.readers import known_consumers

    device, config = ctx.effective.offload_optimizer, ctx.deepspeed
    if (config is None or device.role != "deepspeed" or device.value not in ("cpu", "nvme")
            or config.has("optimizer") or known_consumers(ctx)):
        return
    # DeepSpeed reads the flag as written (get_scalar_param, default true) and tests it for Python truth, so
    # only a falsy value (false, 0) lets a client optimizer through; the string "false" does not
    if not config.get("zero_force_ds_cpu_optimizer", default=True):
        return
    yield Finding("deepspeed", device.path,
                  f"`{ZERO}.offload_optimizer.device` is `{device.value}` and there is no `optimizer` block: "
                  "deepspeed.initialize with the script's own torch optimizer raises ZeRORuntimeException "
                  "('You are using ZeRO-Offload with a client provided optimizer'), since "
                  "zero_force_ds_cpu_optimizer is true (its default); accelerate and the HF Trainer swap the "
                  "optimizer for DeepSpeedCPUAdam instead")
