"""AW507: the workload against the model's own limits. Run when a workload is known (a plan, or --model)."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule


@rule(
    "AW507",
    "sequence-exceeds-positions",
    Severity.ERROR,
    needs=Needs.WORKLOAD,
    fix="Train sequences no longer than the model's positions (training.sequence_length, or --seq-len)",
)
def sequence_exceeds_positions(ctx: CheckContext) -> Iterator[Finding]:
    """## What it does
    Reports a sequence length longer than the positions the model was built for (`max_position_embeddings`,
    `n_positions` for GPT-2).

    ## Why is this bad?
    A model with a learned position table (GPT-2, BERT) indexes past its end: an IndexError (or a CUDA
    device-side assert) in every worker at the first step. A rotary model runs, but on positions it never saw
    in pre-training, which degrades what it learned; neither the launcher nor the Trainer says anything.

    ## Example
    ```yaml
    # accelerate.yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    ```yaml
    # accelerate.plan.yaml
    files: {accelerate: accelerate.yaml}
    system: {name: 2xA100-80GB, gpus_per_machine: 2}
    model: {name: gpt2}
    training: {micro_batch: 1, sequence_length: 2048}
    ```

    Use instead: at most 1024 tokens for GPT-2.
    ```yaml
    # accelerate.plan.yaml
    files: {accelerate: accelerate.yaml}
    system: {name: 2xA100-80GB, gpus_per_machine: 2}
    model: {name: gpt2}
    training: {micro_batch: 1, sequence_length: 1024}
    ```
    """
    from accelwiz.resolution.workload import beyond_positions

    workload = ctx.workload
    positions = workload.model.max_position_embeddings
    problem = beyond_positions(workload.seq_len, positions, workload.model.name)
    if problem is None:
        return
    where = "--seq-len" if "seq_len" in ctx.workload_flags else (
        "the plan's training.sequence_length" if ctx.plan is not None else "the default")
    yield Finding(None, (), f"{problem} ({where})", fix=f"Set it to {positions} or less")
