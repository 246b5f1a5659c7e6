"""The DeepSpeed JSON an Accelerate YAML names (`deepspeed_config.deepspeed_config_file`): where it resolves, as the
worker processes open it, and how it is read (as data, never echoed).

One owner below the rules, the resolution and the launch, which all ask it: the rule engine builds its units with
it, `resolution.run` finds the JSON of a run, `launch.command` and `check --fix` open the same file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from accelwiz.document import Document
from accelwiz.document.read import is_file
from accelwiz.errors import InputError


@dataclass(frozen=True)
class DeepSpeedReference:
    """How `deepspeed_config.deepspeed_config_file` was written and what it resolved to.

    accelerate hands the string to the worker processes, which open it relative to the directory
    `accelerate launch` runs in; accelwiz resolves it the same way and, failing that, next to the YAML.
    """

    written: str
    resolved: Path | None
    relative_to_yaml_only: bool = False



def resolve_deepspeed_file(written: str, yaml_path: Path) -> DeepSpeedReference:
    """Resolve `deepspeed_config_file` as the worker processes do: relative to the working directory, and with
    no `~` expansion (accelerate opens the string as written; AW202 explains a `~`)."""
    candidate = Path(written)
    if is_file(candidate):
        return DeepSpeedReference(written, candidate)
    if not candidate.is_absolute():
        beside_yaml = yaml_path.parent / candidate
        if is_file(beside_yaml):
            return DeepSpeedReference(written, beside_yaml, relative_to_yaml_only=True)
    return DeepSpeedReference(written, None)


def load_named_deepspeed(path: Path) -> Document:
    """The file a YAML's `deepspeed_config_file` names, read as data and never echoed: a config can name any file
    (`/etc/shadow`, `../../.aws/credentials`, the YAML itself), and listing its lines as "unknown key" findings
    would print it. accelerate opens it with `json.load` (`HfDeepSpeedConfig.__init__`, accelerate/utils/
    deepspeed.py), so a file that is not a JSON object is refused by name; so is a JSON object none of whose keys
    DeepSpeed reads (`{}` stays a config: an empty one)."""
    from accelwiz.document.load import document_from_text
    from accelwiz.document.read import read_text

    text = read_text(path, what="the DeepSpeed JSON")
    if not text.lstrip("\ufeff \t\r\n").startswith("{"):
        raise InputError(f"{path}, named by deepspeed_config_file, is not a JSON object, so not a DeepSpeed config "
                         "(accelerate reads it with json.load); its content is not shown",
                         hint="name the DeepSpeed JSON in deepspeed_config_file")
    document = document_from_text(text, path, kind="deepspeed")
    if document.data and not set(document.data) & _deepspeed_keys():
        raise InputError(f"{path}, named by deepspeed_config_file, has no key DeepSpeed reads, so it is not a "
                         f"DeepSpeed config ({len(document.data)} keys); its content is not shown",
                         hint="name the DeepSpeed JSON in deepspeed_config_file")
    return document


def _deepspeed_keys() -> set[str]:
    """Every top-level key the DeepSpeed schema knows, legacy, removed and misplaced ones included."""
    from accelwiz.config.deepspeed import DeepSpeedConfig
    from accelwiz.config.validate import known_keys

    tables = (DeepSpeedConfig.REMOVED_KEYS, DeepSpeedConfig.LEGACY_KEYS, DeepSpeedConfig.MISPLACED_KEYS)
    return set(known_keys(DeepSpeedConfig)).union(*tables)
