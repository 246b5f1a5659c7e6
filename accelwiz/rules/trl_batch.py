"""AW80x: what TRL's GRPOConfig and DPO/GRPO trainers refuse at start-up (needs `check --kind dpo|grpo` with the
training arguments after `--` or `--training-args recipe.yaml`).

Each rule is the condition in trl 1.16's source, cited at the rule; tests/posttraining/test_trl_rules_differential.py
builds the real GRPOConfig (in one process and in two) and the real trainers, and asserts that TRL refuses exactly
when a rule here fires. The world size is the Accelerate YAML's num_processes (1 without a YAML).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


def trl_view(ctx: CheckContext, kind: str | None = None) -> tuple[Any, int] | None:
    """(the TrlArguments, the world size) when `check --kind` gave TRL arguments of this kind; else None."""
    args = getattr(ctx, "training_args", None)
    if args is None or not hasattr(args, "trl") or (kind is not None and getattr(args, "kind", None) != kind):
        return None
    from accelwiz.rules.trainer_view import trainer_view

    view = trainer_view(ctx)
    world = view.world_size if view is not None and view.world_size else 1
    return args, world


def generation_batch(args: Any, world: int) -> tuple[int | None, str | None]:
    """GRPOConfig.__post_init__'s generation batch (grpo_config.py, trl 1.16): (the batch, or None with the reason
    TRL refuses to derive one)."""
    micro, accumulation = args["per_device_train_batch_size"], args["gradient_accumulation_steps"]
    size, steps = args.trl["generation_batch_size"], args.trl["steps_per_generation"]
    if size is None and steps is None:
        return micro * world * accumulation, None
    if size is not None and steps is None:
        if size % (micro * world):
            return None, (f"generation_batch_size ({size}) must be divisible by the global batch size "
                          f"({micro * world}: per_device_train_batch_size {micro} × {world} process(es))")
        return size, None
    if size is None:
        return micro * world * steps, None
    return None, "'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time"


@rule("AW801", "grpo-generation-batch-not-divisible", Severity.ERROR,
      fix="Make per_device_train_batch_size × processes × steps_per_generation a multiple of num_generations")
def grpo_generation_batch_not_divisible(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Computes GRPO's generation batch as `GRPOConfig.__post_init__` does (per_device_train_batch_size × processes
    × steps_per_generation, which defaults to gradient_accumulation_steps; or generation_batch_size) and checks
    that num_generations divides it; also that num_generations is at least 2, that generation_batch_size is a
    multiple of the global batch, and that generation_batch_size and steps_per_generation are not both set.

    ## Why is this bad?
    Every prompt is repeated num_generations times and the advantages are computed per group, so the batch must
    hold whole groups. TRL raises in GRPOConfig, on every rank, after the launcher has started them all, often
    when the number of processes changed (a vLLM server took a GPU) while the recipe did not.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --per_device_train_batch_size 4 --num_generations 8
    distributed_type: MULTI_GPU
    num_processes: 3
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 4
    ```
    """
    found = trl_view(ctx, "grpo")
    if found is None:
        return
    args, world = found
    generations = args.trl["num_generations"]
    batch, refused = generation_batch(args, world)
    if refused:
        yield Finding(None, (), f"GRPOConfig refuses the batch: {refused}",
                      fix="Set only one of generation_batch_size and steps_per_generation, as a multiple of the "
                          "global batch")
    if batch is not None and generations and batch % generations:
        yield Finding(None, (), f"the generation batch {batch} is not divisible by num_generations {generations} "
                                f"({args.where('per_device_train_batch_size')}, {world} process(es), "
                                f"{args.trl_where('num_generations')}): GRPOConfig refuses it")
    if generations is not None and generations < 2:
        yield Finding(None, (), f"num_generations {generations}: GRPO needs at least 2 generations per prompt "
                                "to compute advantages", fix="Set num_generations to 2 or more")


@rule("AW802", "grpo-eval-batch-not-divisible", Severity.ERROR,
      fix="Make per_device_eval_batch_size × processes a multiple of num_generations_eval (or num_generations)")
def grpo_eval_batch_not_divisible(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With evaluation on (eval_strategy other than "no"), checks that the global eval batch
    (per_device_eval_batch_size × processes) is divisible by num_generations_eval, else num_generations, as
    `GRPOConfig.__post_init__` does.

    ## Why is this bad?
    GRPOConfig raises "The global eval batch size ... must be divisible by the number of generations used for
    evaluation" before training starts.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --eval_strategy steps --per_device_eval_batch_size 3 --num_generations 4
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 4
    ```
    """
    found = trl_view(ctx, "grpo")
    if found is None:
        return
    args, world = found
    if str(args.trl["eval_strategy"]).lower() == "no":
        return
    generations = args.trl["num_generations_eval"] or args.trl["num_generations"]
    batch = args.trl["per_device_eval_batch_size"] * world
    if generations and batch % generations:
        yield Finding(None, (), f"the global eval batch {batch} ({args.trl_where('per_device_eval_batch_size')} × "
                                f"{world} process(es)) is not divisible by {generations} generations: GRPOConfig "
                                "refuses it")


@rule("AW803", "grpo-auto-find-batch-size", Severity.ERROR,
      fix="Remove auto_find_batch_size and lower per_device_train_batch_size instead")
def grpo_auto_find_batch_size(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `auto_find_batch_size` in a GRPO run.

    ## Why is this bad?
    Halving the batch on out-of-memory would break the prompt groups of num_generations completions, so
    `GRPOConfig.__post_init__` refuses it outright.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --auto_find_batch_size --per_device_train_batch_size 8
    distributed_type: NO
    ```
    """
    found = trl_view(ctx, "grpo")
    if found is not None and found[0]["auto_find_batch_size"]:
        yield Finding(None, (), f"auto_find_batch_size ({found[0].where('auto_find_batch_size')}) is refused by "
                                "GRPOConfig")


@rule("AW804", "reference-sync-without-reference", Severity.ERROR,
      fix="Drop sync_ref_model, or keep a reference model (GRPO: beta > 0; DPO: no precompute_ref_log_probs)")
def reference_sync_without_reference(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `sync_ref_model` where the trainer keeps no reference model to sync: GRPO with `beta` 0.0 (its
    default), DPO with `precompute_ref_log_probs`, and either with LoRA (the workload's regime, from `--lora` or
    the plan: the adapter disabled is the reference; NotImplementedError).

    ## Why is this bad?
    `GRPOTrainer.__init__` and `DPOTrainer.__init__` raise after the model (and for DPO, the whole dataset's
    reference log-probs) have been loaded.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --sync_ref_model
    distributed_type: NO
    ```
    """
    found = trl_view(ctx)
    if found is None:
        return
    args = found[0]
    if not args.trl.get("sync_ref_model"):
        return
    if args.kind == "grpo" and args.trl["beta"] == 0.0:
        yield Finding(None, (), f"sync_ref_model with {args.trl_where('beta')}: GRPO loads no reference model, "
                                "GRPOTrainer refuses it")
    elif getattr(ctx.workload, "regime", "full") in ("lora", "qlora"):  # checked before DPO's precompute
        regime = ctx.workload.regime
        yield Finding(None, (), f"sync_ref_model with {regime}: the trainer keeps no reference model (it disables "
                                f"the adapter), {'DPO' if args.kind == 'dpo' else 'GRPO'}Trainer refuses it")
    elif args.kind == "dpo" and args.trl.get("precompute_ref_log_probs"):
        yield Finding(None, (), "sync_ref_model with precompute_ref_log_probs: the precomputed log-probs would go "
                                "stale, DPOTrainer refuses it")
