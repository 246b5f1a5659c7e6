"""`accelwiz migrate --to-accelerate VERSION`: Accelerate YAML keys whose form changed between accelerate releases.

Each change below was read in accelerate's source (the installed 1.15 and the release tags of its repository) and
carries the release and pull request it came from. A change applies when the target release reads the new form
(`since` <= VERSION); a key whose new form the target cannot read yet is kept, with a note. A rewrite never changes
what the run does; where a release changed what an unchanged file does, the change is a note (no edit: only the
run's author knows which behaviour they want). Changes that could not be verified, or whose rewrite would change
what the run does, are left out on purpose (docs/migrate.md says which and why).

Which keys are legacy or removed is the schema's (AccelerateConfig.LEGACY_KEYS / REMOVED_KEYS); this table adds
when each changed, where it came from, and the exact conversion accelerate itself performs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from accelwiz.fix.edits import DeleteKey, Edit, RenameKey, SetValue

Version = tuple[int, int, int]
# the newest accelerate whose source these changes were checked against
CHECKED_AGAINST: Version = (1, 15, 0)


def parse_version(text: str) -> Version:
    """'1.13', '1.13.0', 'v1.13.0' -> (1, 13, 0). Pre-release and local tails ('1.13.0rc1', '+cu121') are not
    versions a config is written for: refused."""
    from accelwiz.errors import UsageError

    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    if match is None:
        raise UsageError(f"--to-accelerate {text!r} is not a release number",
                         hint="give a release such as 1.15 or 1.13.0")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def shown(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass
class Step:
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Change:
    key: str  # the top-level key of the old form (of the section a note is about)
    since: Version  # the first release that reads the new form (that gives the key its new meaning)
    source: str  # where the change came from: release and pull request
    plan: Callable[[dict[str, Any]], Step]
    becomes: str  # the new form, for docs/migrate.md
    kind: Literal["rewrite", "note"] = "rewrite"  # a note: the meaning changed, and only the user knows which they want


def _fp16(data: dict[str, Any]) -> Step:
    # ClusterConfig.process_config (accelerate 0.6.0 on, still in 1.15): `mixed_precision` is set to "fp16" when it
    # is absent and `fp16` is truthy, else to None; `fp16` is then deleted whatever its value. A written
    # `mixed_precision` wins over `fp16`.
    value = data["fp16"]
    if "mixed_precision" in data:
        return Step([DeleteKey(("fp16",))], [f"fp16 removed: accelerate ignores it beside mixed_precision "
                                             f"{data['mixed_precision']!r}"])
    if value:
        return Step([RenameKey(("fp16",), "mixed_precision"), SetValue(("mixed_precision",), "fp16")],
                    [f"fp16: {value!r} -> mixed_precision: fp16"])
    return Step([DeleteKey(("fp16",))], [f"fp16: {value!r} removed: no mixed_precision means no mixed precision"])


def _dynamo_backend(data: dict[str, Any]) -> Step:
    # ClusterConfig.process_config (0.17.0 on, still in 1.15): the top-level key is popped and
    # `dynamo_config` becomes {} for "NO", else {"dynamo_backend": value}, replacing any dynamo_config written.
    value = data["dynamo_backend"]
    if not isinstance(value, str):
        return Step([], [f"dynamo_backend {value!r} is not a backend name; left as it is (check reports it)"])
    notes = []
    if "dynamo_config" in data:
        notes.append(f"dynamo_config {data['dynamo_config']!r} was overridden by the top-level dynamo_backend "
                     "(accelerate replaces it); replaced")
    if value == "NO":
        edits: list[Edit] = [DeleteKey(("dynamo_backend",))]
        if "dynamo_config" in data:
            edits.append(DeleteKey(("dynamo_config",)))
        return Step(edits, [*notes, "dynamo_backend NO removed: no dynamo_config means no torch.compile"])
    edits = [DeleteKey(("dynamo_config",))] if "dynamo_config" in data else []
    edits += [RenameKey(("dynamo_backend",), "dynamo_config"), SetValue(("dynamo_config",),
                                                                         {"dynamo_backend": value})]
    return Step(edits, [*notes, f"dynamo_backend {value} -> dynamo_config: {{dynamo_backend: {value}}}"])


def _ipex_config(data: dict[str, Any]) -> Step:
    # 1.13 deleted ClusterConfig.ipex_config, and ClusterConfig.from_yaml_file refuses keys it has no field for
    # ("had unknown keys"); the Accelerator's ipex.optimize path (use_ipex, _prepare_ipex) went with it, after 1.12
    # had advised stock PyTorch >= 2.7, into which Intel upstreamed the optimizations. Nothing replaces the key.
    section = data["ipex_config"]
    used = isinstance(section, dict) and bool(section.get("ipex"))
    return Step([DeleteKey(("ipex_config",))],
                ["ipex_config removed: accelerate 1.13 refuses the key"
                 + ("; accelerate no longer applies ipex.optimize (ipex: true); stock PyTorch >= 2.7 carries Intel's "
                    "CPU/XPU optimizations" if used else "")])


def _unset_gradient_clipping(data: dict[str, Any]) -> Step:
    # 0.30.0 made an unset gradient_clipping "auto" (DeepSpeedPlugin.__post_init__: ACCELERATE_GRADIENT_CLIPPING,
    # which the launcher exports only when the YAML has the key, defaults to "auto"), and Accelerator._prepare_deepspeed
    # fills "auto" with 1.0 (since PR #405). Before, an unset value left DeepSpeed's own default, 0.0 (no clipping)
    # before DeepSpeed 0.19.3 (DeepSpeed PR #8068). Which one the run should have, only its author knows: a note,
    # no edit.
    section = data["deepspeed_config"]
    if data.get("distributed_type") != "DEEPSPEED" or not isinstance(section, dict) or \
            "deepspeed_config_file" in section or "gradient_clipping" in section:
        return Step()
    return Step([], ["deepspeed_config has no gradient_clipping: accelerate >= 0.30 clips at norm 1.0 (unset is "
                     '"auto", filled with 1.0); before, DeepSpeed\'s default applied (0.0, no clipping, before '
                     "DeepSpeed 0.19.3, PR #8068). Write gradient_clipping: 0.0 to keep no clipping, 1.0 to say so "
                     "(accelerate#3807)"])


# In release order. Each `source` names the release whose tag first contains the change, and the pull request.
CHANGES: tuple[Change, ...] = (
    # "Add bfloat16 support": ClusterConfig's fp16 field became mixed_precision, with the conversion above
    Change("fp16", (0, 6, 0), "accelerate 0.6.0, PR #247", _fp16, "`mixed_precision: fp16` (falsy: removed)"),
    # 0.16 had a top-level dynamo_backend field; 0.17.0 replaced it with dynamo_config (#1150) and converts the old
    # key (#1168, in the v0.17.0 tag)
    Change("dynamo_backend", (0, 17, 0), "accelerate 0.17.0, PR #1150 and PR #1168", _dynamo_backend,
           "`dynamo_config: {dynamo_backend: ...}` (`NO`: removed)"),
    Change("deepspeed_config", (0, 30, 0), "accelerate 0.30.0, PR #2649", _unset_gradient_clipping,
           "an unset `gradient_clipping` clips at 1.0: a note, no edit", "note"),
    Change("ipex_config", (1, 13, 0), "accelerate 1.13.0, PR #3883", _ipex_config, "removed (refused since)"),
)


@dataclass
class ReleaseMigration:
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_release_changes(data: dict[str, Any], target: Version) -> ReleaseMigration:
    migration = ReleaseMigration()
    for change in CHANGES:
        if change.key not in data:
            continue
        if change.since > target:
            if change.kind == "note":
                continue
            migration.notes.append(f"{change.key} kept: accelerate {shown(target)} does not read its new form yet "
                                   f"[{change.source}]")
            continue
        step = change.plan(data)
        migration.edits += step.edits
        migration.notes += [f"{note} [{change.source}]" for note in step.notes]
    if target > CHECKED_AGAINST:
        migration.notes.append(f"changes after accelerate {shown(CHECKED_AGAINST)} are not known to this accelwiz")
    return migration


def migrate_to_accelerate(text: str, target: Version) -> tuple[str, list[str]]:
    """The Accelerate YAML `text` written for accelerate `target` (unchanged when nothing applies), and the notes."""
    from accelwiz.document.load import parse_text
    from accelwiz.fix.yaml_edit import apply_yaml

    document = parse_text(text, Path("config.yaml"), kind="accelerate")
    data = document.data if isinstance(document.data, dict) else {}
    migration = plan_release_changes(data, target)
    if not migration.edits:
        return text, migration.notes
    return apply_yaml(text, migration.edits, strict_layout=False), migration.notes
