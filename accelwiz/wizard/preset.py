"""The answers given up front: an --answers file, overridden by init's options, with old spellings renamed and
keys no question asks refused (the flow parses and verifies each value at its question)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError


def valid_keys() -> list[str]:
    from accelwiz.wizard.catalog import FLOW

    return [q.key for q in FLOW]


def preset_answers(answers_file: Path | None, options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Answers from the --answers file, overridden by explicit options, and the deprecation notes of old spellings
    read as the vocabulary's words (wizard/aliases.py); unknown keys are a usage error."""
    from accelwiz.wizard.aliases import renamed

    preset: dict[str, Any] = {}
    notes: list[str] = []
    if answers_file is not None:
        preset, notes = renamed(read_answers_file(answers_file), where=str(answers_file))
    given, option_notes = renamed({key: value for key, value in options.items() if value is not None}, where="option")
    preset.update(given)
    notes += option_notes
    # Giving the target (or the accumulation steps) also answers "set a target global batch?", so answer
    # files written before that question existed stay complete.
    if answers_file is not None:  # files written before the owner question existed mean the files own the batch
        if preset.get("model"):  # and those written before the kind question mean supervised fine-tuning
            preset.setdefault("kind", "sft")
        if str(preset.get("kind", "sft")).strip().lower() == "sft":
            preset.setdefault("owner", "accelerate")
    from accelwiz.wizard.posttraining import lengths_from_seq_len

    lengths_from_seq_len(preset)  # DPO/GRPO: seq_len is prompt + completion, applied or refused, never dropped
    if "target_global_batch" in preset:
        preset.setdefault("use_global_batch", True)
    elif "gradient_accumulation" in preset:
        preset.setdefault("use_global_batch", False)
    unknown = sorted(set(preset) - set(valid_keys()))
    if unknown:
        import difflib

        close = {key: difflib.get_close_matches(str(key), valid_keys(), n=1, cutoff=0.6) for key in unknown}
        meant = [match[0] if len(unknown) == 1 else f"{match[0]} for {key}" for key, match in close.items() if match]
        raise UsageError(
            f"unknown answer key(s): {', '.join(unknown)}" + (f" (did you mean {', '.join(meant)}?)" if meant else ""),
            hint=f"valid keys: {', '.join(valid_keys())}"
        )
    return preset, notes


def read_answers_file(path: Path) -> dict[str, Any]:
    """The answers file as data: read as a config is (document.read: a regular file, bounded, UTF-8) and parsed
    by the config reader, whose node cap stops an alias bomb and whose depth cap stops deep nesting."""
    from accelwiz.document.read import read_text
    from accelwiz.document.yaml_reader import read_yaml

    text = read_text(path, what="an answers YAML")
    try:
        data, _ = read_yaml(text)
    except InputError as exc:
        raise InputError(f"{path}: {exc.message}", hint=exc.hint or "write one `key: value` per line") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: expected `key: value` lines, found a {type(data).__name__}",
            hint=f"valid keys: {', '.join(valid_keys())}",
        )
    return {str(key): value for key, value in data.items()}
