"""AW317: LoRA under FSDP1 with use_orig_params: the frozen base gets a gradient as large as itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.fsdp import _entry, fsdp_view
from accelwiz.rules.rule import Needs, rule


@rule("AW317", "fsdp1-lora-frozen-base-gradients", Severity.WARNING, needs=Needs.WORKLOAD,
      fix="Use FSDP2 (`fsdp_version: 2`; `accelwiz migrate` rewrites the config), which keeps no gradient for "
          "frozen parameters; or wrap the adapters apart (PEFT's fsdp_auto_wrap_policy) with "
          "fsdp_use_orig_params: false")
def fsdp1_lora_frozen_base_gradients(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds LoRA (`--lora`, or the plan's method) under FSDP1 with `fsdp_use_orig_params` true, which is what
    `accelerate launch` uses when the config does not say (and the Trainer's `--fsdp_config` when its `version`
    is 1 and it does not say), and reports the gradient memory the frozen base gets.

    ## Why is this bad?
    FSDP1 flattens the parameters of a wrapped unit into one FlatParameter; with `use_orig_params` a unit may mix
    the frozen base and the trainable adapters, the FlatParameter then requires grad, and its gradient covers the
    whole unit: "the gradient memory usage will be higher than expected (namely, equivalent to not freezing those
    parameters)" (torch's FSDP docs, `use_orig_params`). On an H200, Llama-2-7B with LoRA as rank 0 of two held
    12.5 GiB of fp32 gradient shards for 0.08 GiB of adapters, 27.5 GiB allocated where FSDP2 needed 18.8
    (benchmarks/results/gpu_fsdp_accelerate.jsonl). The run trains; it just pays for full fine-tuning's
    gradients, and may not fit where LoRA was meant to.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml --model llama-2-7b --lora
    distributed_type: FSDP
    num_processes: 2
    mixed_precision: bf16
    fsdp_config:
      fsdp_version: 1
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
    ```

    Use instead: FSDP2.
    ```yaml
    # accelwiz check accelerate.yaml --model llama-2-7b --lora
    distributed_type: FSDP
    num_processes: 2
    mixed_precision: bf16
    fsdp_config:
      fsdp_version: 2
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
    ```
    """
    view = fsdp_view(ctx)
    workload = ctx.workload
    if (strategy := _fsdp1_lora_with_orig_params(view, workload)) is None:
        return
    written = _entry(ctx, "fsdp_use_orig_params") or _entry(ctx, "fsdp_version")
    yield Finding(
        "accelerate",
        written[0] if written else ("fsdp_config",),
        f"LoRA under FSDP1 with {_orig_params_how(ctx, view)}: the frozen base of {workload.model.name} gets a "
        f"gradient, {_frozen_base_gradients(workload, strategy) / 2**30:.1f} GiB per GPU over "
        f"{strategy.world_size} GPU(s) for {workload.trainable_parameters / 1e6:,.1f}M trainable parameters",
    )


def _fsdp1_lora_with_orig_params(view: object, workload: object) -> object | None:
    """The FSDP strategy where LoRA runs under FSDP1 with use_orig_params not false; None otherwise."""
    if view is None or workload is None or workload.regime != "lora" or view.fsdp_version.value != 1:
        return None
    if view.fsdp_use_orig_params.value is False:
        return None
    from accelwiz.estimate.configured_strategy import strategy_from_effective

    strategy = strategy_from_effective(view)
    return strategy if strategy is not None and strategy.is_fsdp else None


def _frozen_base_gradients(workload: object, strategy: object) -> float:
    """The bytes of gradient per GPU that use_orig_params adds: the frozen base's share of the FlatParameters."""
    from accelwiz.estimate.states import model_states

    return (model_states(workload, strategy).gradients
            - model_states(workload, replace(strategy, fsdp_use_orig_params=False)).gradients)


def _orig_params_how(ctx: CheckContext, view: object) -> str:
    """How use_orig_params came to be true: the Trainer's plugin, the file, or accelerate launch's default."""
    orig = view.fsdp_use_orig_params
    if orig.source == "trainer":  # the Trainer's --fsdp/--fsdp_config builds the plugin
        return f"use_orig_params true ({orig.note})"
    if _entry(ctx, "fsdp_use_orig_params"):
        return "fsdp_use_orig_params: true"
    return "fsdp_use_orig_params unset (accelerate launch's default: true)"
