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
    if view is None or workload is None or workload.regime != "lora" or view.fsdp_version.value != 1:
        return
    if view.fsdp_use_orig_params.value is False:
        return
    from accelwiz.estimate.states import model_states
    from accelwiz.estimate.strategy import strategy_from_effective

    strategy = strategy_from_effective(view)
    if strategy is None or not strategy.is_fsdp:
        return
    extra = (model_states(workload, strategy).gradients
             - model_states(workload, replace(strategy, fsdp_use_orig_params=False)).gradients)
    written = _entry(ctx, "fsdp_use_orig_params") or _entry(ctx, "fsdp_version")
    path = written[0] if written else ("fsdp_config",)
    orig = view.fsdp_use_orig_params
    if orig.source == "trainer":  # the Trainer's --fsdp/--fsdp_config builds the plugin
        how = f"use_orig_params true ({orig.note})"
    elif _entry(ctx, "fsdp_use_orig_params"):
        how = "fsdp_use_orig_params: true"
    else:
        how = "fsdp_use_orig_params unset (accelerate launch's default: true)"
    yield Finding(
        "accelerate",
        path,
        f"LoRA under FSDP1 with {how}: the frozen base of {workload.model.name} gets a gradient, "
        f"{extra / 2**30:.1f} GiB per GPU over {strategy.world_size} GPU(s) for "
        f"{workload.trainable_parameters / 1e6:,.1f}M trainable parameters",
    )
