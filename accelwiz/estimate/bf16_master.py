"""DeepSpeed's bf16 master weights and optimizer states said on the command line: `--bf16-master-weights-and-grads`
and `--bf16-optimizer-states`, DeepSpeed's own keys of its JSON's `bf16` section (PR #7700, first in 0.18.3), over
the strategy the flags or the files chose. The flags beat the JSON's values and say which won.

`--precision bf16` under a ZeRO strategy is a bf16 model with DeepSpeed's fp32 master partition and fp32 Adam
states (deepspeed_step.py `deepspeed_state_widths`); these flags make them bf16, as the JSON's keys do. Refused
where DeepSpeed 0.19.8 refuses them, with its reason:

* runtime/config.py `_do_error_check`: either key only with ZeRO stage 1, 2 or 3; `bf16_optimizer_states` only with
  `bf16_master_weights_and_grads` ("bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled.");
* runtime/base_optimizer.py `_configure_master_weights`: bf16 masters with fp32 states (no bf16_optimizer_states)
  need ZeRO-Offload with DeepSpeedCPUAdam (the stages' `_enforce_cpu_offload` / `_enforce_optimizer_offload`:
  "Master weights feature requires ZeRO-3 Offload with DeepSpeedCPUAdam"): the fp32 states cannot stay on the GPU;
* before 0.18.3 the bf16 section has neither key, and its pydantic model forbids unknown ones (config_utils.py
  `DeepSpeedConfigModel`, extra="forbid"); from 0.18.3 until 0.19.1 (PR #8010) bf16 states under optimizer offload
  are silently fp32 (DeepSpeedCPUAdam's `fp32_optimizer_states` default), from 0.19.1 the engine builds its CPU Adam
  with `fp32_optimizer_states=False` (engine.py `get_optimizer_configuration`).

And where they say nothing: no DeepSpeed strategy, or a model that is not bf16 (`--precision mixed` says fp32
masters; fp16's are `fp16_master_weights_and_grads`, not these).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError
from accelwiz.estimate.strategy import Strategy, chosen_strategy, flag_over_file
from accelwiz.resolution.stack import Version, version_text

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

MASTER_FLAG = "--bf16-master-weights-and-grads"
STATES_FLAG = "--bf16-optimizer-states"
BF16_MASTER_SINCE: Version = (0, 18, 3)  # DeepSpeed#7700: bf16_master_weights_and_grads, bf16_optimizer_states
CPU_BF16_STATES_SINCE: Version = (0, 19, 1)  # DeepSpeed#8010: DeepSpeedCPUAdam keeps bf16 moments under offload


def with_bf16_master(strategy: Strategy | None, master: bool | None, states: bool | None,
                     workload: Workload) -> Strategy | None:
    """The flags (None: not given) over `strategy`'s bf16 options; UsageError where DeepSpeed refuses the result or
    the flags say nothing (module docstring)."""
    given = [(flag if value else flag.replace("--", "--no-", 1), value)
             for flag, value in ((MASTER_FLAG, master), (STATES_FLAG, states)) if value is not None]
    if not given:
        return strategy
    said = " ".join(flag for flag, _ in given)
    if strategy is None or not strategy.is_deepspeed:
        raise UsageError(f"{said}: DeepSpeed's bf16 options for its ZeRO optimizer (stage 1, 2 or 3 only); "
                         f"{chosen_strategy(strategy)}", hint=f"pass --strategy zero1|zero2|zero3, or drop {said}")
    turned_on = [flag for flag, value in given if value]
    if turned_on:
        _refuse_off_bf16(workload, turned_on[0])
    new_master = strategy.bf16_master_weights_and_grads if master is None else master
    new_states = strategy.bf16_optimizer_states if states is None else states
    if (refused := _refusal(strategy, new_master, new_states, workload.stack.deepspeed)) is not None:
        raise refused
    # an option on before the flags was the JSON's (the defaults are off): the flag wins over it or agrees with it
    files = strategy.bf16_master_note or "the JSON's bf16 section"
    note = "; ".join(flag_over_file(flag, value, current, files, from_file=current)
                     for (flag, value), current in zip(given, _current(strategy, master, states)))
    return replace(strategy, bf16_master_weights_and_grads=new_master, bf16_optimizer_states=new_states,
                   bf16_master_note=note)


def _current(strategy: Strategy, master: bool | None, states: bool | None) -> list[bool]:
    """The files' values of the options the flags give, in the flags' order."""
    return [current for current, value in ((strategy.bf16_master_weights_and_grads, master),
                                           (strategy.bf16_optimizer_states, states)) if value is not None]


def _refuse_off_bf16(workload: Workload, flag: str) -> None:
    """A flag that turns an option on: a bf16 model, on a DeepSpeed that has the keys."""
    if workload.precision != "bf16":
        raise UsageError(f"{flag} with --precision {workload.precision}: DeepSpeed's bf16 section keeps a bf16 "
                         "model's master copy in bf16 (--precision mixed says fp32 master weights)",
                         hint=f"pass --precision bf16, or drop {flag}")
    version = workload.stack.deepspeed
    if version is not None and version < BF16_MASTER_SINCE:
        raise UsageError(f"{flag} on DeepSpeed {version_text(version)}: its bf16 section has no such key before "
                         "0.18.3 (deepspeedai/DeepSpeed#7700) and its config refuses unknown keys",
                         hint=f"pass --stack deepspeed==0.18.3 or later, or drop {flag}")


def _refusal(strategy: Strategy, master: bool, states: bool, version: Version | None) -> UsageError | None:
    """What DeepSpeed refuses of the options together (module docstring), or would silently replace; None where it
    runs them."""
    offload = strategy.offload_optimizer != "none"
    if states and not master:
        return UsageError("bf16_optimizer_states requires bf16_master_weights_and_grads (DeepSpeed "
                          "runtime/config.py): the optimizer states follow the master copy's dtype",
                          hint=f"add {MASTER_FLAG}, or pass --no-bf16-optimizer-states")
    if master and not states and not offload:
        return UsageError(f"{MASTER_FLAG} without {STATES_FLAG}: DeepSpeed keeps fp32 optimizer states beside bf16 "
                          "masters only under ZeRO-Offload with DeepSpeedCPUAdam (base_optimizer.py "
                          "_configure_master_weights: 'Master weights feature requires ... Offload')",
                          hint=f"add {STATES_FLAG} (bf16 states on the GPU), or --offload-optimizer cpu")
    if states and offload and version is not None and version < CPU_BF16_STATES_SINCE:
        return UsageError(f"{STATES_FLAG} with optimizer offload on DeepSpeed {version_text(version)}: before "
                          "0.19.1 (deepspeedai/DeepSpeed#8010) its DeepSpeedCPUAdam keeps the moments in fp32 on the "
                          "host", hint="pass --stack deepspeed==0.19.1 or later, or --offload-optimizer none")
    return None


def as_the_run_keeps_masters(strategies: list[Strategy], shown: Strategy | None,
                             workload: Workload) -> list[Strategy]:
    """The strategies a recommendation or --compare weighs, each ZeRO one keeping the shown run's bf16 masters and
    states where DeepSpeed runs them so (bf16 states under offload from 0.19.1; bf16 masters beside fp32 states
    only under offload): the run's JSON says them whatever stage it is offered. Others stay fp32."""
    if shown is None or not shown.bf16_master_weights_and_grads:
        return strategies
    states, version = shown.bf16_optimizer_states, workload.stack.deepspeed
    # where DeepSpeed would refuse the run's options, a strategy is offered as it runs without them
    return [replace(s, bf16_master_weights_and_grads=True, bf16_optimizer_states=states,
                    bf16_master_note=shown.bf16_master_note)
            if s.is_deepspeed and _refusal(s, True, states, version) is None else s for s in strategies]
