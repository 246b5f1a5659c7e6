"""`AccelerateView`: defensive, typed reads of an Accelerate config document that may not validate.

Rules look at one or two keys each and must not trip over values the schema rules already report, so they
read through this view: a value of the wrong type reads as None, exactly as if the key were absent.
"""

from __future__ import annotations

from typing import Any, get_args

from accelwiz.config.accelerate import DistributedType
from accelwiz.document import Document, KeyPath

# Distributed types for which `accelerate launch` sets `--multi_gpu` (one process per device, through torchrun):
# every MULTI_<device> type except MULTI_CPU, derived from the one list of types so the two cannot drift.
MULTI_DEVICE_TYPES = frozenset(t for t in get_args(DistributedType) if t.startswith("MULTI_") and t != "MULTI_CPU")


class AccelerateView:
    """Typed, defensive access to the keys of a (possibly invalid) Accelerate config document."""

    def __init__(self, document: Document) -> None:
        self.document = document

    def typed(self, path: KeyPath, kind: type | tuple[type, ...]) -> Any:
        """The value at `path` if it has type `kind` (a bool never counts as an int), else None."""
        value = self.document.get(*path)
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            return None
        return value if isinstance(value, kind) else None

    def integer(self, *path: str) -> int | None:
        return self.typed(path, int)

    def flag(self, *path: str) -> bool | None:
        return self.typed(path, bool)

    def text(self, *path: str) -> str | None:
        return self.typed(path, str)

    def section(self, name: str) -> dict[str, Any]:
        return self.document.section(name)

    @property
    def is_sagemaker(self) -> bool:
        return self.document.get("compute_environment") == "AMAZON_SAGEMAKER"

    @property
    def distributed_type(self) -> str | None:
        """The distributed type; an unquoted `NO` (YAML false) reads as "NO", as accelerate treats it."""
        value = self.document.get("distributed_type")
        if value is False:
            return "NO"
        return value if isinstance(value, str) else None

    @property
    def num_machines(self) -> int | None:
        value = self.document.get("num_machines", default=1)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    @property
    def num_processes(self) -> int | None:
        """Total processes as written (accelerate's default: 1 for NO, else -1 = "pass --num_processes").

        The default compares the raw value: `process_config` gives 1 only to the string "NO", not to the
        boolean an unquoted NO loads as, so that file is refused without --num_processes.
        """
        if not self.document.has("num_processes"):
            return 1 if self.document.get("distributed_type") == "NO" else -1
        return self.integer("num_processes")

    def nested(self, section: str, name: str, prefix: str) -> tuple[KeyPath, Any] | None:
        """(path, value) of a nested key written with or without the prefix the launcher adds, or None."""
        found = self.section(section)
        short = name.removeprefix(prefix)
        for written in (name, short):
            if written in found:
                return (section, written), found[written]
        return None

    def fsdp(self, name: str) -> tuple[KeyPath, Any] | None:
        """(path, value) of an `fsdp_config` key, e.g. fsdp("fsdp_version")."""
        return self.nested("fsdp_config", name, "fsdp_")

    @property
    def fsdp_version(self) -> int | None:
        """1 or 2 (1 when absent); None when malformed."""
        found = self.fsdp("fsdp_version")
        if found is None:
            return 1
        return found[1] if found[1] in (1, 2) and not isinstance(found[1], bool) else None

    @property
    def is_fsdp(self) -> bool:
        return self.distributed_type == "FSDP"
