"""The FSDP settings a run uses (effective.py), from either spelling of the Accelerate YAML's `fsdp_config` keys.

FSDP1 always gets FSDP_SHARDING_STRATEGY from the launcher (FULL_SHARD unless written) and ignores
`reshard_after_forward`; FSDP2 reads only `reshard_after_forward` and has no backward prefetch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz import coerce
from accelwiz.effective_value import EffectiveValue, fsdp_entry

if TYPE_CHECKING:
    from accelwiz.effective_reader import DocumentReader


def fsdp_values(yaml: DocumentReader, distributed_type: Any) -> dict[str, EffectiveValue]:
    """FSDP version, sharding and parameter offload, from either spelling of the `fsdp_config` keys."""
    def entry(name: str, read: Any, exact: Any = None) -> EffectiveValue | None:
        found = fsdp_entry(yaml.document, name)
        return yaml.at(found[0], found[1], read=read, exact=exact) if found else None

    version = entry("fsdp_version", _fsdp_version, coerce.exact_integer)
    if distributed_type != "FSDP":
        return {"fsdp_version": version} if version is not None else {}
    version = version or EffectiveValue(1, "accelerate default")
    if version.value == 2:
        # FSDP2 reads only reshard_after_forward (str_to_bool); a sharding strategy is ignored (AW301).
        reshard = entry("fsdp_reshard_after_forward", coerce.flag, coerce.exact_flag)
        if reshard is None:
            sharding = EffectiveValue("FULL_SHARD", "accelerate default", note="FSDP2 reshards after forward")
        else:
            name = {True: "FULL_SHARD", False: "SHARD_GRAD_OP"}.get(reshard.value)
            sharding = EffectiveValue(name, reshard.source, reshard.role, reshard.path,
                                      f"reshard_after_forward: {str(reshard.value).lower()}" if name else
                                      reshard.note, reshard.written, reshard.invalid)
    else:
        # FSDP1: the launcher always exports FSDP_SHARDING_STRATEGY, so reshard_after_forward is ignored (AW305).
        sharding = entry("fsdp_sharding_strategy", coerce.sharding_strategy,
                         lambda v: coerce.sharding_strategy(v) is not None) or EffectiveValue(
            "FULL_SHARD", "accelerate default", note="the launcher exports FSDP_SHARDING_STRATEGY=FULL_SHARD")
    offload = entry("fsdp_offload_params", coerce.flag, coerce.exact_flag) or EffectiveValue(
        False, "accelerate default")
    if version.value == 2:  # FullyShardedDataParallelPlugin sets backward_prefetch to None for FSDP2
        prefetch = EffectiveValue("NO_PREFETCH", "accelerate default", note="FSDP2 has no backward prefetch")
        orig = EffectiveValue(True, "FSDP2", note="FSDP2 always keeps the original parameters")
    else:
        prefetch = entry("fsdp_backward_prefetch", backward_prefetch) or EffectiveValue(
            "NO_PREFETCH", "accelerate default", note="no FSDP_BACKWARD_PREFETCH: backward_prefetch None")
        # `accelerate launch --fsdp_use_orig_params` defaults to "true" and exports FSDP_USE_ORIG_PARAMS
        orig = entry("fsdp_use_orig_params", coerce.flag, coerce.exact_flag) or EffectiveValue(
            True, "accelerate default", note="accelerate launch exports FSDP_USE_ORIG_PARAMS=true")
    return {"fsdp_version": version, "fsdp_sharding": sharding, "fsdp_offload_params": offload,
            "fsdp_backward_prefetch": prefetch, "fsdp_use_orig_params": orig}


BACKWARD_PREFETCH = ("BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH")


def backward_prefetch(value: Any) -> str | None:
    """FSDP1's backward prefetch as `FullyShardedDataParallelPlugin.__post_init__` reads it (accelerate/utils/
    dataclasses.py): a name in any case, or BackwardPrefetch's number (1 = BACKWARD_PRE, 2 = BACKWARD_POST)."""
    if isinstance(value, str) and value.upper() in BACKWARD_PREFETCH:
        return value.upper()
    number = coerce.integer(value) if not isinstance(value, str) else (int(value) if value.isdigit() else None)
    return {1: "BACKWARD_PRE", 2: "BACKWARD_POST"}.get(number) if number is not None else None


def _fsdp_version(value: Any) -> int | None:
    # FSDP_VERSION reaches the plugin as str(value) and is read back with int(): a quoted "2" works there,
    # though the schema refuses it.
    if isinstance(value, str) and value.strip() in ("1", "2"):
        return int(value)
    version = coerce.integer(value)
    return version if version in (1, 2) else None
