"""Whether ZeRO-3 builds the model under `deepspeed.zero.Init`, as the run's script does: `--zero3-init` /
`--no-zero3-init` over the strategy the flags or files chose, and the strategies a recommendation offers built the
same way. Where it is off the whole 16-bit model reaches every GPU before partitioning (loading.py)."""

from __future__ import annotations

from dataclasses import replace

from accelwiz.estimate.strategy import Strategy, chosen_strategy, flag_over_file


def with_zero3_init(strategy: Strategy | None, given: bool | None, *, quantized: bool = False) -> Strategy | None:
    """`--zero3-init/--no-zero3-init` over the strategy the flags or the files chose: whether the script builds its
    model once DeepSpeed's config exists (ZERO_INIT_DEFAULT) or before it (loaded before TrainingArguments or the
    Accelerator, or a plain `deepspeed.initialize` loop). The flag beats the YAML's zero3_init_flag and says which
    won. UsageError where it would be dropped: no ZeRO-3 (no zero.Init), or --zero3-init on a quantized base."""
    if given is None:
        return strategy
    from accelwiz.errors import UsageError

    flag = "--zero3-init" if given else "--no-zero3-init"
    if strategy is None or strategy.kind != "zero3":
        raise UsageError(f"{flag} says whether ZeRO-3 builds the model under deepspeed.zero.Init; "
                         f"{chosen_strategy(strategy)}",
                         hint=f"pass --strategy zero3 (or a --config at DeepSpeed zero_stage 3), or drop {flag}")
    if given and quantized:  # transformers 5.25 modeling_utils: `needs_zero3_init = ... and not _is_quantized`
        raise UsageError("--zero3-init with --qlora: transformers never builds a quantized model under "
                         "deepspeed.zero.Init (it loads it on the meta device, then quantizes onto each GPU)",
                         hint="drop --zero3-init (a QLoRA base is estimated whole on every GPU at loading)")
    note = flag_over_file(flag, given, strategy.zero_init, strategy.zero_init_note,
                          strategy.zero_init_source == "yaml")
    return replace(strategy, zero_init=given, zero_init_source="flag", zero_init_note=note)


def as_the_script_loads(strategies: list[Strategy], shown: Strategy | None) -> list[Strategy]:
    """The strategies a recommendation or --compare weighs, each ZeRO-3 one building the model as the shown run
    does: a script that loads it before DeepSpeed's config exists (--no-zero3-init, or the YAML's flag on an old
    accelerate) does so under any ZeRO-3 it is offered, offload included."""
    if shown is None or shown.kind != "zero3" or shown.zero_init:
        return strategies
    return [replace(s, zero_init=False, zero_init_source=shown.zero_init_source, zero_init_note=shown.zero_init_note)
            if s.kind == "zero3" else s for s in strategies]
