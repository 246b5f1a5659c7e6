"""Per-GPU memory of the source config and the converted one side by side, from the estimator: each side's
strategy comes from its own effective values (`strategy_from_effective`), the workload resolved once by the caller."""

from __future__ import annotations

from typing import Any

from accelwiz.effective import EffectiveConfig


def compare_memory(before: EffectiveConfig, after: EffectiveConfig, workload: Any, system: Any = None) -> str:
    """The estimator's comparison table, the source config first, judged against `system` when given.

    The workload is resolved with the source config (its precision, a micro-batch it writes), as `check`'s memory
    rules resolve it (accelwiz/convert/request.py); both sides get the same workload, so the rows differ only by
    strategy.
    """
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.recommend import CompareRow
    from accelwiz.estimate.render import render_compare
    from accelwiz.estimate.configured_strategy import strategy_from_effective
    from accelwiz.estimate.verdict import memory_verdict

    rows = []
    for effective in (before, after):
        strategy = strategy_from_effective(effective)
        if strategy is None:
            return "memory: the estimator cannot plan one of the two configs (no process count or stage)"
        estimate = estimate_memory(workload, strategy)
        judged = None
        if system is not None and system.gpu_capacity_bytes:
            judged = memory_verdict(estimate, system.gpu_capacity_bytes, system.host.memory_total_bytes)
        rows.append(CompareRow(estimate, judged))  # both sides as asked: a conversion changes the strategy only
    table = render_compare(rows).replace("by strategy, fastest first", "before and after the conversion")
    return f"{table}\nworkload: {workload.model.name}, micro-batch {workload.micro_batch}, sequence {workload.seq_len}"
