"""The library versions a run trains with, where a version changes its memory: one field of the resolved workload.

* transformers before 4.49 copies a causal LM's fp32 logits for the shifted loss (estimate/workload.py
  `copies_shifted_logits`);
* bitsandbytes before 0.43.2 keeps every 4-bit linear's input for backward (estimate/activations_lora.py
  `kept_4bit_inputs`);
* accelerate before 1.0.0 builds a transformers model under deepspeed.zero.Init only where the YAML's
  `zero3_init_flag` is true (estimate/configured_strategy.py `zero_init`);
* transformers and torch together pick the HF Trainer's default AdamW kernel (resolution/trainer_optim.py);
* DeepSpeed before 0.18.3 has no bf16 master weights or optimizer states (its config refuses the keys), and before
  0.19.1 keeps CPU Adam's moments fp32 under offload (estimate/bf16_master.py);
* TRL's SFTTrainer from 0.7.5 until 0.26 casts a k-bit-prepared QLoRA's fp32 embedding and LM head back to bf16
  under bf16 (estimate/workload.py `trl_bf16_cast_parameters`). TRL is the trainer a script runs, not a library
  every run imports: its version is None unless `--stack trl==VERSION` says it (an installed TRL says nothing
  about a plain Trainer script or the built-in trainer).
* PEFT from 0.19 (under transformers 5) adapts the fused experts and the router of a MoE model where a v4 name asks
  for them, from 0.20 under "all-linear" too, from 0.22 on Qwen2-MoE as well (modelspec/peft_moe.py).
* LitGPT: a run that trains with LitGPT's own scripts and GPT module (not transformers'): its attention, norms,
  LoRA and Fabric's loss tail (estimate/litgpt_model.py); from 0.4.6 its RMSNorm multiplies the weight in fp32.
  Like TRL, the scripts a run uses: None unless `--stack litgpt==VERSION` says it.

Default: the versions installed here, read from package metadata (accelwiz.probe.packages, no import: `estimate`
starts fast), or the ones a `--system` profile lists (a probe saved on the machine that will train: `check --system
node.json`), the same versions rules/installed.py reads (`package_version`, the one owner of both).
`--stack NAME==VERSION` (repeatable) says the stack a run trains with elsewhere, or trained with when a published
figure was measured. A library that is not installed is None: the estimator then models today's.

No torch, no pydantic (the resolution's rule).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from accelwiz.errors import UsageError
from accelwiz.probe.packages import TRACKED, distribution_version
from accelwiz.probe.versions import release_tuple
from accelwiz.resolution.sourced import FLAG, Sourced

Version = tuple[int, int, int]

INSTALLED = "installed"  # the field's default source: this environment's package metadata
SYSTEM_PROFILE = "system profile"  # the versions a --system profile lists (a probe of the machine that trains)

# a version as --stack takes it: major.minor[.patch]; a pre-release (0.43.2.dev0) is not its release, so it is
# refused rather than read as one
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")


@dataclass(frozen=True)
class Stack:
    """Versions of the libraries whose version changes memory, each (major, minor, patch); None: absent."""

    transformers: Version | None = None
    bitsandbytes: Version | None = None
    accelerate: Version | None = None
    torch: Version | None = None
    deepspeed: Version | None = None
    trl: Version | None = None  # only where --stack says it (module docstring)
    peft: Version | None = None
    litgpt: Version | None = None  # only where --stack says it (module docstring)

    def items(self) -> list[tuple[str, Version | None]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    def as_json(self) -> dict[str, str | None]:
        """Each library's version as text, None where it is absent (run_report.json, `estimate --format json`)."""
        return {name: version_text(version) for name, version in self.items()}

    def __str__(self) -> str:
        # an unsaid TRL (LitGPT) is no absent library: the run's trainer is simply not TRL's as far as anyone said
        return ", ".join(f"{name} {version_text(version) or 'absent'}" for name, version in self.items()
                         if version is not None or name not in _SAID_ONLY)


KNOWN: tuple[str, ...] = tuple(f.name for f in fields(Stack))

# accelerate e9e5a73 (first in v1.0.0, "multiple model/configuration DeepSpeed support"): DeepSpeedPlugin.
# set_deepspeed_weakref hands transformers its HfDeepSpeedConfig whatever zero3_init_flag says; before it, only
# `if self.zero3_init_flag:`. One fact, read by the estimate (configured_strategy.zero_init) and by AW217.
ZERO3_INIT_FLAG_IGNORED_SINCE: Version = (1, 0, 0)
_EXAMPLE = {"transformers": "4.37.2", "bitsandbytes": "0.41.1", "accelerate": "0.28.0", "torch": "2.3.1",
            "deepspeed": "0.18.3", "trl": "0.9.6", "peft": "0.21.2",
            "litgpt": "0.5.3"}
# read from a flag only: the trainer a script runs (module docstring)
_SAID_ONLY = frozenset({"trl", "litgpt"})


def version_text(version: Version | None) -> str | None:
    """A version as text, 4.30.2 for (4, 30, 2); None where the library is absent."""
    return None if version is None else ".".join(map(str, version))


def _padded(numbers: tuple[int, ...]) -> Version:
    major, minor, patch = (numbers + (0, 0, 0))[:3]
    return major, minor, patch


def package_version(package: str, packages: Mapping[str, str | None] | None = None) -> str | None:
    """The version text of `package` in the stack that will run: the profile's where `packages` (a --system
    profile's) lists it ("" or None there: not installed), else this environment's package metadata."""
    if packages is not None and package in packages:
        return packages[package] or None
    return distribution_version(*TRACKED.get(package, (package,)))


def _stack(packages: Mapping[str, str | None] | None) -> Stack:
    """The release numbers (2.13.0+cpu is 2.13.0) of each library; None where absent or unreadable."""
    def version(name: str) -> Version | None:
        text = package_version(name, packages)
        numbers = release_tuple(text) if text else None
        return _padded(numbers) if numbers else None

    return Stack(**{name: version(name) for name in KNOWN if name not in _SAID_ONLY})


@functools.cache  # package metadata is read once per process, not once per workload
def installed_stack() -> Stack:
    """The versions installed here; None where one is absent or unreadable."""
    return _stack(None)


def profile_stack(packages: Mapping[str, str | None]) -> Stack:
    """The versions a --system profile lists (a library it does not list: as installed here)."""
    return _stack(packages)


def stack_from_flags(given: Sequence[str], base: Stack | None = None) -> Stack:
    """`--stack NAME==VERSION`, each given once, over `base` (default: the installed stack); UsageError in one
    line for an unknown library, a missing `==` or a malformed version."""
    versions: dict[str, Version] = {}
    for text in given:
        name, version = _one(text)
        if name in versions and versions[name] != version:
            raise UsageError(f"--stack names {name} twice ({version_text(versions[name])} and {version_text(version)})",
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
                         hint=f"e.g. --stack {name}=={_EXAMPLE[name]}")
    return name, _padded(tuple(int(part) for part in version.split(".")))


def resolved_stack(given: Sourced | Sequence[str] | None,
                   packages: Mapping[str, str | None] | None = None) -> Sourced:
    """The workload's `stack` field: `--stack` where given (already resolved by flags_from_options, or as the
    strings `check` passes), over the versions a --system profile lists (`packages`, where it lists any), else
    over the installed ones."""
    if isinstance(given, Sourced):
        return given
    base = profile_stack(packages) if packages else None
    if given:
        stack = stack_from_flags(given, base)
        named = " ".join(f"--stack {text}" for text in given)
        rest = "the system profile's" if base is not None else "as installed"
        return Sourced(stack, FLAG, f"{named} (a library not named: {rest})")
    if base is not None:
        return Sourced(base, SYSTEM_PROFILE, f"the --system profile's packages: {base}")
    installed = installed_stack()
    return Sourced(installed, INSTALLED, f"this environment's package metadata: {installed}")


def with_profile_stack(flags: dict, packages: Mapping[str, str | None] | None) -> dict:
    """Workload flags whose `stack` starts from a --system profile's versions, where the profile lists any (a
    probe lists every tracked package; a preset none): `check --system node.json` resolves what will run there,
    as its rules already read it (rules/installed.py)."""
    if not packages:
        return flags
    return {**flags, "stack": resolved_stack(flags.get("stack"), packages)}
