"""A hub id of any spelling -> its config.json, through huggingface_hub: the local cache first.

`resolve_hub_config("Qwen/Qwen3-8B")` (or `org/name@revision`) returns the parsed config.json and where it was
read from. The cache is asked first (`try_to_load_from_cache`, no network); only on a miss, and only when
`HF_HUB_OFFLINE` is not set, does `hf_hub_download` fetch the one small file (it lands in the same cache, so
the next call is offline). Offline and not cached, a gated or missing repo, no network: one line naming the
id and how to get the file, exit 2.

The cache location is read from the environment at call time (HF_HUB_CACHE, then HF_HOME/hub), as
huggingface_hub itself does at import time, so a cache laid out by a test or set by the user after import is
honoured. huggingface_hub is imported only here, inside the functions.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError

# HF repo ids: `org/name` of letters, digits, `-`, `_`, `.` (at most 96 characters each), optional @revision.
_HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95})(?:@(?P<rev>[\w./-]+))?$")
_TRUE = {"1", "on", "yes", "true"}


def is_hub_id(text: str) -> bool:
    """`org/name` or `org/name@revision`; not a path (`./x/y`, `/x/y`, `~/x`, `x/config.json`)."""
    return bool(_HUB_ID.match(text)) and not text.endswith(".json") and ".." not in text


def hub_offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE, which huggingface_hub also honours) is set to a true value."""
    return any(os.environ.get(key, "").strip().lower() in _TRUE for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_cache_dir() -> Path:
    """Where huggingface_hub keeps its cache: HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub."""
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(key):
            return Path(os.environ[key]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


def resolve_hub_config(hub_id: str) -> tuple[dict[str, Any], str]:
    """The parsed config.json of `hub_id` and a source line naming the file it came from."""
    match = _HUB_ID.match(hub_id)
    if match is None:
        raise UsageError(f"`{hub_id}` is not a hub id", hint="write it as org/name, e.g. Qwen/Qwen3-8B")
    repo, revision = match.group("repo"), match.group("rev")
    path = _cached(repo, revision) or _download(hub_id, repo, revision)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"cannot read the cached config.json of {hub_id} ({path}): {exc}",
            hint=f"delete it and download again: hf download {repo} config.json",
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"the config.json of {hub_id} is not a JSON object", hint="pass a HF config.json")
    return data, f"https://huggingface.co/{repo} (config.json from {path})"


def _cached(repo: str, revision: str | None) -> str | None:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo, "config.json", cache_dir=hub_cache_dir(), revision=revision)
    except (ValueError, OSError):  # HFValidationError (a ValueError) for a name the hub would refuse
        return None
    return found if isinstance(found, str) else None  # None: unknown; a sentinel: cached as absent


def _download(hub_id: str, repo: str, revision: str | None) -> str:
    fix = f"download it (hf download {repo} config.json) or pass the path of a config.json"
    if hub_offline():
        raise UsageError(f"{hub_id}: config.json is not in the huggingface_hub cache and HF_HUB_OFFLINE is set",
                         hint=fix)
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    proxied = any(os.environ.get(k) for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"))
    # huggingface_hub would retry 5 times with backoff (about 25 s) before saying there is no network
    if not proxied and not _reachable(endpoint):
        raise UsageError(f"{hub_id}: config.json is not cached and {endpoint} cannot be reached", hint=fix)
    from huggingface_hub import errors as hub_errors
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import logging as hub_logging

    verbosity = hub_logging.get_verbosity()
    hub_logging.set_verbosity_error()  # its "Retrying in 1s" lines are not ours to show
    try:
        return hf_hub_download(repo, "config.json", revision=revision, cache_dir=hub_cache_dir(), etag_timeout=10)
    except hub_errors.LocalEntryNotFoundError:  # before EntryNotFoundError, its base: no network, not cached
        raise UsageError(f"{hub_id}: config.json is not cached and the hub cannot be reached", hint=fix) from None
    except hub_errors.GatedRepoError:
        raise UsageError(
            f"{hub_id} is a gated repository", hint=f"accept its license on the hub, run `hf auth login`, then {fix}"
        ) from None
    except hub_errors.RepositoryNotFoundError:
        raise UsageError(
            f"no hub repository `{repo}` (or it is private)", hint="check the spelling (org/name, as on the hub)"
        ) from None
    except hub_errors.RevisionNotFoundError:
        raise UsageError(f"{hub_id}: no revision `{revision}`", hint="name a branch, tag or commit") from None
    except hub_errors.EntryNotFoundError:
        raise UsageError(f"{hub_id} has no config.json", hint="pass a model repository, or --params 7e9") from None
    except (hub_errors.HfHubHTTPError, OSError, ValueError) as exc:  # a proxy error, a full disk, a refused id
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{hub_id}: cannot fetch config.json ({reason[:160]})", hint=fix) from None
    finally:
        hub_logging.set_verbosity(verbosity)


def _reachable(endpoint: str, timeout: float = 3.0) -> bool:
    """A TCP connection to the endpoint's host opens within `timeout` (name resolution included)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
