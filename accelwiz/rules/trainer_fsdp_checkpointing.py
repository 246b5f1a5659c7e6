"""AW714: FSDP turned on by the Trainer's own `--fsdp` together with the Trainer's activation checkpointing.

`TrainingArguments._process_fsdp_args` (transformers 5 training_args.py) warns when `activation_checkpointing`
(alias `gradient_checkpointing`) is on with `--fsdp`: the model's checkpointed blocks recompute their forward in
the backward pass outside FSDP's wrapping, so every FULL_SHARD unit is all-gathered a second time per step
(transformers#30404, whose fix transformers#31578 added the warning). FSDP's own `activation_checkpointing`
in `--fsdp_config` checkpoints inside the FSDP unit and avoids it. The launcher's FSDP (the Accelerate YAML) is
AW710's: there the two settings together are refused outright.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


@rule("AW714", "trainer-fsdp-with-trainer-checkpointing", Severity.WARNING,
      fix='Turn the Trainer\'s checkpointing off (--gradient_checkpointing false) and put "activation_checkpointing": '
          "true in --fsdp_config, which checkpoints inside each FSDP unit")
def trainer_fsdp_with_trainer_checkpointing(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds the Trainer's `--fsdp` (FSDP set up by `TrainingArguments` rather than by the Accelerate YAML)
    together with the Trainer's `--gradient_checkpointing` / `--activation_checkpointing`, which every TRL config
    turns on by default.

    ## Why is this bad?
    The checkpointed layers recompute their forward during the backward pass outside FSDP's units, so FSDP
    all-gathers each sharded layer's parameters once more per step: extra communication for no memory saved
    (transformers#30404). transformers warns about it at start-up and recommends FSDP's own activation
    checkpointing.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --fsdp "full_shard auto_wrap" --gradient_checkpointing true
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    Use instead: `--fsdp "full_shard auto_wrap" --fsdp_config fsdp.json` with `"activation_checkpointing": true`
    in fsdp.json, and no `--gradient_checkpointing`.
    """
    args = getattr(ctx, "training_args", None)
    if args is None or not args["fsdp"] or not args.gradient_checkpointing:
        return  # _process_fsdp_args returns early on a falsy fsdp ("" or unset)
    checkpointing = next((args.where(n) for n in ("activation_checkpointing", "gradient_checkpointing")
                          if args.is_given(n)), "gradient checkpointing (TRL's default)")
    yield Finding(None, (), f"{args.where('fsdp')} with {checkpointing}: each checkpointed layer is all-gathered "
                            "again in the backward pass (transformers warns: prefer fsdp_config's "
                            "activation_checkpointing)")
