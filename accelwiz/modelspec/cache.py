"""The spec transformers builds from a config.json, kept on disk by the config's hash: built once, then read.

Building a model on the meta device (architecture.py) imports torch and transformers: about 4 s, on every
`estimate`, `check` or `run --dry-run` of a plan that names a config.json or a hub id. The spec it yields
depends only on the config and the transformers version, so it is written once under
`$ACCELWIZ_CACHE_DIR` (default `$XDG_CACHE_HOME/accelwiz`, else `~/.cache/accelwiz`) as
`specs/<sha256>.json`, keyed by the canonical config JSON, the installed transformers version (read from its
package metadata, not imported), the source of the code that derives the spec and this file's format. A
later call reads it without importing torch or transformers. A cache that cannot be written (read-only home)
or a damaged entry is not an error: the spec is built again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import fields
from pathlib import Path
from typing import Any

from accelwiz.modelspec.spec import ModelSpec
from accelwiz.modelspec.tensors import Tensor

FORMAT = 1
_PER_CALL = ("name", "source")  # the same config under another name or path is the same spec


def cache_dir() -> Path:
    """Where accelwiz caches: ACCELWIZ_CACHE_DIR, else XDG_CACHE_HOME/accelwiz, else ~/.cache/accelwiz."""
    if os.environ.get("ACCELWIZ_CACHE_DIR"):
        return Path(os.environ["ACCELWIZ_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "accelwiz"


def _transformers_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformers")
    except PackageNotFoundError:
        return "none"


# The modules whose code turns a config into a spec (reading, checking, building, the spec and its features).
_DERIVING = ("from_config.py", "config_checks.py", "meta_build.py", "spec.py", "tensors.py", "families.py",
             "remote_code.py", "stream.py")


def _code_version() -> str:
    """The code that derives a spec (`_DERIVING`): an entry written by other code is not read."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in _DERIVING:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def cache_key(config_json: str) -> str:
    """The entry's name: the config (canonical JSON), the transformers version and the code that builds it."""
    text = f"{FORMAT}\n{_transformers_version()}\n{_code_version()}\n{config_json}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _path(config_json: str) -> Path:
    return cache_dir() / "specs" / f"{cache_key(config_json)}.json"


def load(config_json: str, name: str, source: str) -> ModelSpec | None:
    """The cached spec of this config under this name and source; None on a miss or a damaged entry."""
    try:
        data = json.loads(_path(config_json).read_text(encoding="utf-8"))
        return _from_dict(data, name, source)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def store(config_json: str, spec: ModelSpec) -> None:
    """Write the entry atomically (a concurrent reader sees the old one or the whole new one); never raises."""
    path = _path(config_json)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(_to_dict(spec)), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass


def _to_dict(spec: ModelSpec) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for item in fields(spec):
        if item.name in _PER_CALL:
            continue
        value = getattr(spec, item.name)
        if item.name == "built_tensors" and value is not None:
            value = [[t.module, t.name, list(t.shape), t.linear] for t in value]
        elif isinstance(value, tuple):
            value = list(value)
        data[item.name] = value
    return data


def _from_dict(data: dict[str, Any], name: str, source: str) -> ModelSpec:
    known = {item.name for item in fields(ModelSpec)}
    values = {key: value for key, value in data.items() if key in known}
    if values.get("built_tensors") is not None:
        values["built_tensors"] = tuple(
            Tensor(module, tensor, tuple(shape), bool(linear))
            for module, tensor, shape, linear in values["built_tensors"]
        )
    values["aliases"] = tuple(values.get("aliases", ()))
    return ModelSpec(**values, name=name, source=source)
