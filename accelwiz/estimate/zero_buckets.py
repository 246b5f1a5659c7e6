"""`--zero-reduce-bucket-size N|auto`: DeepSpeed's `zero_optimization.reduce_bucket_size` from the command line.

The bucket is allocated whole whatever the model (ZeRO-1/2's `setup_buckets`, ZeRO-3's ipg buffer at init), and
ZeRO-3 copies each flushed bucket for its reduce-scatter (zero3_reduce_copy.py), so the size moves the estimate by
up to twice the bucket: 5e8 elements (DeepSpeed's default) is 0.93 GiB in bf16, the 5e7 of many example JSONs a
tenth of it, and "auto" is hidden_size² (the HF Trainer and accelerate fill it: transformers
integrations/deepspeed.py `fill_match("zero_optimization.reduce_bucket_size", hidden_size * hidden_size)`).
`--config` reads the JSON's value (configured_strategy.py); the flag says it where there is no JSON, and beats
the JSON's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy

FLAG = "--zero-reduce-bucket-size"


def parse_bucket(given: str) -> int | str:
    """"auto", or a positive whole number of elements as DeepSpeed's JSON takes it (5e8 and 500000000 alike);
    UsageError for anything else (DeepSpeed refuses 0: AW218)."""
    from accelwiz.errors import UsageError

    word = given.strip().lower()
    if word == "auto":
        return "auto"
    try:
        number = float(word)
    except ValueError:
        number = float("nan")
    if not number.is_integer() or number <= 0:
        raise UsageError(f"{FLAG} `{given}` is not a bucket size",
                         hint="give elements (5e8 is DeepSpeed's default, 5e7 a common JSON's) or auto "
                              "(hidden_size², as the HF Trainer fills it)")
    return int(number)


def with_reduce_bucket(strategy: Strategy | None, given: str | None) -> Strategy | None:
    """The strategy with the flag's bucket; UsageError where it would be dropped (no DeepSpeed ZeRO strategy)."""
    if given is None:
        return strategy
    from accelwiz.errors import UsageError
    from accelwiz.estimate.strategy import chosen_strategy

    bucket = parse_bucket(given)
    if strategy is None or not strategy.is_deepspeed:
        raise UsageError(f"{FLAG} is DeepSpeed ZeRO's gradient bucket; {chosen_strategy(strategy)}",
                         hint=f"pass --strategy zero1|zero2|zero3 (or a --config with a DeepSpeed JSON), "
                              f"or drop {FLAG}")
    return replace(strategy, zero_reduce_bucket_size=bucket)
