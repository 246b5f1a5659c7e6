"""Turn a `--system` value into a MachineProfile: `local`, a preset name, or a saved JSON profile."""

from __future__ import annotations

import json
import os
from pathlib import Path

from accelwiz.atomic import atomic_write
from accelwiz.errors import InputError, UsageError
from accelwiz.probe.model import PROFILE_SCHEMA_VERSION, MachineProfile
from accelwiz.probe.presets import PRESETS, close_preset_names, find_preset, preset_profile

LOCAL = "local"


def load_system(spec: str) -> MachineProfile:
    """`local` probes this machine, a preset name (any case) builds that preset, anything else is a file."""
    if spec.strip().lower() == LOCAL:
        from accelwiz.probe.local import probe_local

        return probe_local()
    preset = find_preset(spec)
    if preset is not None:
        return preset_profile(preset)
    path = Path(spec).expanduser()
    if path.exists() or _looks_like_path(spec):
        return load_profile(path)
    close = close_preset_names(spec)
    raise UsageError(
        f"`{spec}` is neither `local`, a preset, nor a profile file",
        hint=(f"did you mean {', '.join(f'`{n}`' for n in close)}? " if close else "")
        + f"presets: {', '.join(p.name for p in PRESETS)} (see `accelwiz probe --list-presets`)",
    )


def load_profile(path: Path) -> MachineProfile:
    """Read a profile written by `accelwiz probe --save`; InputError when it is unreadable or invalid."""
    from pydantic import ValidationError

    from accelwiz.document.read import read_text  # bounded, a regular file: a FIFO or /dev/zero never hangs

    try:
        text = read_text(path, what="a machine profile")
    except InputError as exc:
        reason = exc.message.removeprefix(f"{path}: ")
        raise InputError(f"{path}: cannot read the machine profile ({reason})",
                         hint="write one on the training machine with `accelwiz probe --save node.json`",
                         ) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(f"{path}: nesting too deep for a machine profile",
                         hint="write one with `accelwiz probe --save node.json`") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})",
                         hint="write one with `accelwiz probe --save node.json`") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > PROFILE_SCHEMA_VERSION:
        # checked before the model: a newer layout would otherwise read as "extra inputs", or load with its
        # fields meaning what this version thinks they mean
        raise InputError(f"{path}: written by a newer accelwiz (profile schema_version {version}; this one "
                         f"reads {PROFILE_SCHEMA_VERSION})",
                         hint="upgrade accelwiz, or write the profile again with this accelwiz's "
                              "`accelwiz probe --save`")
    try:
        profile = MachineProfile.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a machine profile: {_first_problem(exc)}",
                         hint="compare it with the output of `accelwiz probe --json`") from None
    return profile.model_copy(update={"source": "file"})


def save_profile(profile: MachineProfile, path: Path) -> None:
    """Write `profile` as JSON atomically: a reader sees the old file or the whole new one, never half."""
    path = Path(path)
    text = profile.model_dump_json(indent=2) + "\n"
    try:
        atomic_write(path, text, create_parents=False)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _looks_like_path(spec: str) -> bool:
    return spec.endswith(".json") or os.sep in spec or "/" in spec


def _first_problem(exc: object) -> str:
    errors = exc.errors()  # type: ignore[attr-defined]
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"`{where}`: {first['msg']}{more}"
