"""The library versions a run trains with, where a version changes its memory: one field of the resolved workload.

* transformers before 4.49 copies a causal LM's fp32 logits for the shifted loss (estimate/workload.py
  `copies_shifted_logits`);
* bitsandbytes before 0.43.2 keeps every 4-bit linear's input for backward (estimate/activations_lora.py
  `kept_4bit_inputs`).

Default: the versions installed here, read from package metadata (accelwiz.probe.packages, no import: `estimate`
starts fast). `--stack NAME==VERSION` (repeatable) says the stack a run trains with elsewhere, or trained with
when a published figure was measured. A library that is not installed is None: the estimator then models today's.

No torch, no pydantic (the resolution's rule).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from accelwiz.errors import UsageError
from accelwiz.probe.packages import TRACKED, distribution_version
from accelwiz.probe.versions import release_tuple
from accelwiz.resolution.sourced import FLAG, Sourced

Version = tuple[int, int, int]

INSTALLED = "installed"  # the field's default source: this environment's package metadata

# a version as --stack takes it: major.minor[.patch]; a pre-release (0.43.2.dev0) is not its release, so it is
# refused rather than read as one
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")


@dataclass(frozen=True)
class Stack:
    """Versions of the libraries whose version changes memory, each (major, minor, patch); None: absent."""

    transformers: Version | None = None
    bitsandbytes: Version | None = None

    def items(self) -> list[tuple[str, Version | None]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    def as_json(self) -> dict[str, str | None]:
        """Each library's version as text, None where it is absent (run_report.json, `estimate --format json`)."""
        return {name: _text(version) for name, version in self.items()}

    def __str__(self) -> str:
        return ", ".join(f"{name} {_text(version) or 'absent'}" for name, version in self.items())


KNOWN: tuple[str, ...] = tuple(f.name for f in fields(Stack))


def _text(version: Version | None) -> str | None:
    return None if version is None else ".".join(map(str, version))


def _padded(numbers: tuple[int, ...]) -> Version:
    major, minor, patch = (numbers + (0, 0, 0))[:3]
    return major, minor, patch


@functools.cache  # package metadata is read once per process, not once per workload
def installed_stack() -> Stack:
    """The versions installed here (their release numbers: 2.13.0+cpu is 2.13.0); None where one is absent or
    unreadable."""
    def version(name: str) -> Version | None:
        text = distribution_version(*TRACKED.get(name, (name,)))
        numbers = release_tuple(text) if text else None
        return _padded(numbers) if numbers else None

    return Stack(**{name: version(name) for name in KNOWN})


def stack_from_flags(given: Sequence[str], base: Stack | None = None) -> Stack:
    """`--stack NAME==VERSION`, each given once, over `base` (default: the installed stack); UsageError in one
    line for an unknown library, a missing `==` or a malformed version."""
    versions: dict[str, Version] = {}
    for text in given:
        name, version = _one(text)
        if name in versions and versions[name] != version:
            raise UsageError(f"--stack names {name} twice ({_text(versions[name])} and {_text(version)})",
                             hint=f"pass one --stack {name}==VERSION")
        versions[name] = version
    return replace(base if base is not None else installed_stack(), **versions)


def _one(text: str) -> tuple[str, Version]:
    name, equals, version = text.partition("==")
    name, version = name.strip().lower(), version.strip()
    if not equals:
        raise UsageError(f"--stack {text}: expected NAME==VERSION",
                         hint=f"e.g. --stack bitsandbytes==0.41.1 (libraries: {', '.join(KNOWN)})")
    if name not in KNOWN:
        raise UsageError(f"--stack {text}: no version of `{name}` changes the estimate",
                         hint=f"the libraries it knows are {', '.join(KNOWN)}")
    if not _VERSION.fullmatch(version):
        raise UsageError(f"--stack {text}: `{version}` is not a version major.minor[.patch]",
                         hint=f"e.g. --stack {name}=={'0.41.1' if name == 'bitsandbytes' else '4.37.2'}")
    return name, _padded(tuple(int(part) for part in version.split(".")))


def resolved_stack(given: Sourced | Sequence[str] | None) -> Sourced:
    """The workload's `stack` field: `--stack` where given (already resolved by flags_from_options, or as the
    strings `check` passes), else the installed versions."""
    if isinstance(given, Sourced):
        return given
    if given:
        stack = stack_from_flags(given)
        named = " ".join(f"--stack {text}" for text in given)
        return Sourced(stack, FLAG, f"{named} (a library not named: as installed)")
    installed = installed_stack()
    return Sourced(installed, INSTALLED, f"this environment's package metadata: {installed}")
