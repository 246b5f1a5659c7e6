"""`accelwiz migrate`: an FSDP1 Accelerate config rewritten for FSDP2 (accelerate 1.15), in place, comments kept.

What `accelerate to-fsdp2` does, without its leaks: it carries every key it has no entry for unchanged, so the
prefix-less spellings accelerate also reads (`sharding_strategy: FULL_SHARD`, `backward_prefetch: ...`) and the
numeric strategies (`fsdp_sharding_strategy: 1`) reach the FSDP2 config as FSDP1 keys or values (accelerate#4065
was the same leak for the keys it did list); and it re-dumps the YAML, sorted and without comments. Here every
FSDP1 option is either mapped to its FSDP2 key or removed with a note saying what FSDP2 does instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelwiz.fix.edits import AddKey, DeleteKey, Edit, RenameKey, SetValue

# FSDP1 sharding strategy (name or 1-5) -> reshard_after_forward, and what is lost
STRATEGIES: dict[str, tuple[bool, str | None]] = {
    "FULL_SHARD": (True, None),
    "SHARD_GRAD_OP": (False, None),
    "NO_SHARD": (False, "NO_SHARD has no FSDP2 form: FSDP2 always shards; use distributed_type MULTI_GPU (DDP) to "
                        "keep full replicas"),
    "HYBRID_SHARD": (True, "HYBRID_SHARD: FSDP2 shards within a node and replicates across nodes only through "
                           "parallelism_config (parallelism_config_dp_replicate_size x dp_shard_size)"),
    "HYBRID_SHARD_ZERO2": (False, "HYBRID_SHARD_ZERO2: the replication across nodes needs parallelism_config "
                                  "(parallelism_config_dp_replicate_size) in FSDP2"),
}
STRATEGY_NUMBERS = {1: "FULL_SHARD", 2: "SHARD_GRAD_OP", 3: "NO_SHARD", 4: "HYBRID_SHARD", 5: "HYBRID_SHARD_ZERO2"}
REMOVED: dict[str, str] = {
    "backward_prefetch": "FSDP2 prefetches the next all-gather itself (implicit prefetching); no setting",
    "backward_prefetch_policy": "the old name of backward_prefetch, which FSDP2 does not have",
    "forward_prefetch": "not available in accelerate's FSDP2",
    "use_orig_params": "FSDP2 always keeps the original parameters (as DTensors)",
    "sync_module_states": "FSDP2 broadcasts rank 0's weights itself with cpu_ram_efficient_loading; no setting",
}


@dataclass
class Migration:
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    already: bool = False  # nothing to do: not FSDP, or FSDP2 already


def _strategy(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return STRATEGY_NUMBERS.get(value)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return STRATEGY_NUMBERS.get(int(text))
        return text.upper() if text.upper() in STRATEGIES else None
    return None


_BASE = ("fsdp_config",)


def plan_fsdp2(data: dict[str, Any]) -> Migration:
    """The edits that turn this config's `fsdp_config` into FSDP2."""
    migration = Migration()
    section = data.get("fsdp_config")
    nothing = _nothing_to_migrate(section)
    if nothing is not None:
        migration.already = True
        migration.notes.append(nothing)
        return migration
    written = _Written(section)
    _migrate_strategy(written, migration)
    _migrate_reshard_written_as_strategy(written, migration)
    _remove_fsdp1_only(written, migration)
    version_key = written.find("version")
    if version_key is not None:
        migration.edits.append(SetValue((*_BASE, version_key), 2))
    else:
        migration.edits.append(AddKey(_BASE, written.name("version"), 2))
    return migration


def _nothing_to_migrate(section: Any) -> str | None:
    """Why there is nothing to do (no fsdp_config, or FSDP2 already); None for an FSDP1 section."""
    if not isinstance(section, dict) or not section:
        return "no fsdp_config: nothing to migrate"
    version = section.get("fsdp_version", section.get("version", 1))
    if str(version).strip() == "2":
        return "fsdp_config already says fsdp_version 2"
    return None


@dataclass(frozen=True)
class _Written:
    """The FSDP1 fsdp_config as written: its keys with the fsdp_ prefix or without (accelerate reads both)."""

    section: dict[str, Any]

    def name(self, short: str) -> str:
        """The spelling a new key takes: prefixed when any written key is."""
        return f"fsdp_{short}" if any(str(k).startswith("fsdp_") for k in self.section) else short

    def find(self, short: str) -> str | None:
        return next((k for k in (f"fsdp_{short}", short) if k in self.section), None)


def _migrate_strategy(written: _Written, migration: Migration) -> None:
    """The FSDP1 sharding strategy as FSDP2's reshard_after_forward (dropped where that is already written)."""
    section = written.section
    strategy_key, reshard_key = written.find("sharding_strategy"), written.find("reshard_after_forward")
    if strategy_key is None:
        return
    strategy = _strategy(section[strategy_key])
    if reshard_key is not None:
        migration.edits.append(DeleteKey((*_BASE, strategy_key)))
        migration.notes.append(f"{strategy_key} removed: {reshard_key} is already written and is what FSDP2 "
                               "reads")
    elif strategy is None:
        migration.edits.append(DeleteKey((*_BASE, strategy_key)))
        migration.notes.append(f"{strategy_key} {section[strategy_key]!r} is not a strategy; removed "
                               f"(FSDP2's {written.name('reshard_after_forward')} defaults to true, full sharding)")
    else:
        reshard, lost = STRATEGIES[strategy]
        target = written.name("reshard_after_forward")
        migration.edits += [RenameKey((*_BASE, strategy_key), target), SetValue((*_BASE, target), reshard)]
        migration.notes.append(f"{strategy_key} {strategy} -> {target}: {str(reshard).lower()}")
        if lost:
            migration.notes.append(lost)


def _migrate_reshard_written_as_strategy(written: _Written, migration: Migration) -> None:
    """`fsdp_reshard_after_forward: FULL_SHARD` (how accelerate config writes the FSDP1 strategy) as a boolean."""
    reshard_key = written.find("reshard_after_forward")
    if reshard_key is None or isinstance(written.section[reshard_key], bool):
        return
    strategy = _strategy(written.section[reshard_key])
    if strategy is None:
        return
    reshard, lost = STRATEGIES[strategy]
    migration.edits.append(SetValue((*_BASE, reshard_key), reshard))
    migration.notes.append(f"{reshard_key} {strategy} (an FSDP1 strategy) -> {str(reshard).lower()}")
    if lost:
        migration.notes.append(lost)


def _remove_fsdp1_only(written: _Written, migration: Migration) -> None:
    """The FSDP1 options FSDP2 does not have, removed with what FSDP2 does instead; a local state dict sharded."""
    for short, why in REMOVED.items():
        key = written.find(short)
        if key is not None:
            migration.edits.append(DeleteKey((*_BASE, key)))
            migration.notes.append(f"{key} removed: {why}")
    state_key = written.find("state_dict_type")
    if state_key is not None and str(written.section[state_key]).upper() == "LOCAL_STATE_DICT":
        migration.edits.append(SetValue((*_BASE, state_key), "SHARDED_STATE_DICT"))
        migration.notes.append(f"{state_key} LOCAL_STATE_DICT -> SHARDED_STATE_DICT: FSDP2 has no local state dict")


def migrate_text(text: str, syntax: str = "yaml") -> tuple[str, Migration]:
    """The migrated text (unchanged when there is nothing to do) and what was done."""
    from accelwiz.document.load import parse_text
    from accelwiz.fix.edits import EditError
    from accelwiz.fix.yaml_edit import apply_yaml

    if syntax != "yaml":
        return text, Migration(already=True, notes=["not an Accelerate YAML"])
    document = parse_text(text, Path("config.yaml"), kind="accelerate")
    migration = plan_fsdp2(document.data)
    if migration.already or not migration.edits:
        return text, migration
    try:
        return apply_yaml(text, migration.edits), migration
    except EditError:
        # a migration rewrites the file anyway (as `accelerate to-fsdp2` does): accept ruamel's normal layout for
        # the rare file it cannot reproduce byte for byte (trailing spaces, `{ }`); comments and order stay
        migration.notes.append("the layout was normalized (trailing spaces, `{ }` spacing); comments and key order "
                               "are kept")
        return apply_yaml(text, migration.edits, strict_layout=False), migration

