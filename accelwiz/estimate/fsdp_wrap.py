"""FSDP's wrap policy in the estimate: one unit per transformer block, or the whole model one unit.

What the libraries do (the installed sources):

* accelerate 1.16 `FullyShardedDataParallelPlugin.__post_init__` (utils/dataclasses.py) reads the policy as
  `os.environ.get("FSDP_AUTO_WRAP_POLICY", "NO_WRAP")`, and `accelerate launch` exports that variable only where
  the YAML names a policy (utils/launch.py): a YAML without `fsdp_auto_wrap_policy` wraps nothing.
  `set_auto_wrap_policy` turns SIZE_BASED_WRAP with `min_num_params` 0 into no policy at all. (The HF Trainer's own
  `fsdp` argument defaults to TRANSFORMER_BASED_WRAP, transformers 5.25 `_process_fsdp_args`; that is not a YAML.)
* Without a policy FSDP1 wraps the model in one `FullyShardedDataParallel`, FSDP2 calls `fully_shard` on the root
  only (accelerate's `fsdp2_prepare_model`): one unit, the root. The root is not resharded after forward
  (torch/distributed/fsdp/_runtime_utils.py `_post_forward_reshard`; FSDP2's `_lazy_init` sets the root's
  post_forward_mesh_info to None), so the whole model stays gathered from the first forward to the end of
  backward, and its whole unsharded gradient exists before the one reduce-scatter (fsdp_reserve.py counts both).

`check` says the same of a written NO_WRAP (AW308, rules/fsdp_setup.py). `--fsdp-wrap block|none` says it for a
run the flags describe, and beats the YAML's policy, saying which won.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.estimate.strategy import Strategy

WRAP_CHOICES = ("block", "none")
_UNSET = ("no fsdp_auto_wrap_policy in the YAML: accelerate's default NO_WRAP (`accelerate launch` exports "
          "FSDP_AUTO_WRAP_POLICY only where the YAML names one)")


def wrap_from_effective(effective: EffectiveConfig) -> dict[str, Any]:
    """The Strategy fields an FSDP YAML's wrap policy gives, as accelerate resolves it."""
    policy = effective.fsdp_auto_wrap_policy
    if policy.value is None:  # not written (or not readable: the schema rules report it)
        return {"fsdp_wrap": "none", "fsdp_wrap_source": "default", "fsdp_wrap_note": _UNSET}
    said = f"the YAML's fsdp_auto_wrap_policy {policy.value}"
    if policy.value == "NO_WRAP":
        return {"fsdp_wrap": "none", "fsdp_wrap_source": "yaml", "fsdp_wrap_note": said}
    if policy.value == "SIZE_BASED_WRAP":
        threshold = effective.fsdp_min_num_params.value
        if not isinstance(threshold, int) or threshold <= 0:  # the plugin's `set_auto_wrap_policy`: no policy
            return {"fsdp_wrap": "none", "fsdp_wrap_source": "yaml",
                    "fsdp_wrap_note": f"{said} with fsdp_min_num_params {threshold or 0}, which accelerate "
                                      "turns into no wrapping"}
        return {"fsdp_wrap": "block", "fsdp_wrap_source": "yaml",
                "fsdp_wrap_note": f"{said} (min_num_params {threshold:,}), counted as one unit per block"}
    return {"fsdp_wrap": "block", "fsdp_wrap_source": "yaml", "fsdp_wrap_note": said}


def with_fsdp_wrap(strategy: Strategy | None, given: str | None) -> Strategy | None:
    """`--fsdp-wrap block|none` over the strategy the flags or the files chose; the flag beats the YAML's policy
    and says which won. UsageError where it would be dropped: no FSDP strategy, or a word it does not know."""
    if given is None:
        return strategy
    from accelwiz.errors import UsageError

    word = given.strip().lower()
    if word not in WRAP_CHOICES:
        raise UsageError(f"unknown --fsdp-wrap `{given}`", hint="choose block (one unit per transformer block) "
                                                                "or none (the whole model one unit)")
    flag = f"--fsdp-wrap {word}"
    from accelwiz.estimate.strategy import FSDP_WRAP_DEFAULT, chosen_strategy, flag_over_file

    if strategy is None or not strategy.is_fsdp:
        raise UsageError(f"{flag} says how FSDP wraps the model into units; {chosen_strategy(strategy)}",
                         hint=f"pass --strategy fsdp (or a --config with distributed_type FSDP), or drop {flag}")
    # the YAML's policy, or its absence, is a file's word; the default is not
    note = flag_over_file(flag, word, strategy.fsdp_wrap, strategy.fsdp_wrap_note,
                          strategy.fsdp_wrap_note != FSDP_WRAP_DEFAULT)
    return replace(strategy, fsdp_wrap=word, fsdp_wrap_source="flag", fsdp_wrap_note=note)

