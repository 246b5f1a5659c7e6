"""AW420-AW425: fp8 (`fp8_config`, `mixed_precision: fp8`) and dynamo (`dynamo_config`) settings in the
Accelerate YAML."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelwiz.document import Document, KeyPath
from accelwiz.effective import section_entry
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.fsdp import ram_efficient_loading
from accelwiz.rules.rule import rule

# Keys `accelerate config` writes into fp8_config -> (the key the recipes read, the recipes' default).
FP8_WIZARD_KEYS = {
    "amax_history_length": ("amax_history_len", 1024),
    "amax_compute_algorithm": ("amax_compute_algo", "most_recent"),
    "optimization_level": ("opt_level", "O2"),
}
DYNAMO_OPTION_DEFAULTS = {"dynamo_mode": "default", "dynamo_use_fullgraph": False,
                          "dynamo_use_dynamic": False,
                          "dynamo_use_regional_compilation": False}


def _view(ctx: CheckContext) -> Document | None:
    return ctx.accelerate


def _fp8(view: Document, name: str) -> tuple[KeyPath, Any] | None:
    return section_entry(view, "fp8_config", name, "fp8_")


def _uses_fp8(ctx: CheckContext) -> bool:
    """The launcher's mixed_precision is fp8 (strict: a value of the wrong type is the schema's finding)."""
    return ctx.effective.launcher_mixed_precision.strict == "fp8"


@rule("AW420", "fp8-without-backend", Severity.WARNING,
      fix="Set fp8_config.backend to TE, MSAMP or AO")
def fp8_without_backend(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `mixed_precision: fp8` with no `fp8_config.backend`.

    ## Why is this bad?
    accelerate then picks the backend from whatever is installed (MS-AMP if importable, else
    TransformerEngine), so the same file trains with a different FP8 recipe on another machine, or fails with
    "Tried to train with `fp8` and auto-detect backend, but no FP8-compatible backend was installed".

    ## Example
    ```yaml
    mixed_precision: fp8
    ```
    Use instead: add `fp8_config: {backend: TE}`.
    ```yaml
    mixed_precision: fp8
    fp8_config: {backend: TE}
    ```
    """
    if _uses_fp8(ctx) and not ctx.effective.fp8_backend.is_written:
        yield Finding("accelerate", ("mixed_precision",), "mixed_precision fp8 without fp8_config.backend")


@rule("AW421", "fp8-wizard-key-ignored", Severity.WARNING,
      fix="Rename the key to the one the FP8 recipe reads")
def fp8_wizard_key_ignored(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `amax_history_length`, `amax_compute_algorithm` and `optimization_level` in `fp8_config`.

    ## Why is this bad?
    `accelerate config` writes these names, but the TransformerEngine and MS-AMP recipes read
    `amax_history_len`, `amax_compute_algo` and `opt_level`: the values are exported under the wrong
    environment variable and the defaults (1024, most_recent, O2) are used instead (accelerate 1.15, N3).

    ## Example
    ```yaml
    fp8_config:
      backend: TE
      amax_history_length: 16
    ```
    Use instead: `amax_history_len: 16`.
    ```yaml
    fp8_config:
      backend: TE
      amax_history_len: 16
    ```
    """
    view = _view(ctx)
    if view is None:
        return
    for written, (read, default) in FP8_WIZARD_KEYS.items():
        found = _fp8(view, written)
        if found is None:
            continue
        used = _fp8(view, read)
        yield Finding("accelerate", found[0],
                      f"fp8_config.{written} is never read; the recipe reads {read} "
                      f"(which is {used[1] if used else default!r})", fix=f"rename it to `{read}`")


@rule("AW422", "fp8-config-without-fp8", Severity.WARNING,
      fix="Set mixed_precision: fp8, or remove fp8_config")
def fp8_config_without_fp8(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a non-empty `fp8_config` while `mixed_precision` is not `fp8`.

    ## Why is this bad?
    The launcher exports the FP8 settings only for fp8 runs, so the section has no effect; usually
    `mixed_precision` was meant to be `fp8`.

    ## Example
    ```yaml
    mixed_precision: bf16
    fp8_config:
      backend: TE
    ```
    Use instead: `mixed_precision: fp8`, or remove `fp8_config`.
    ```yaml
    mixed_precision: fp8
    fp8_config:
      backend: TE
    ```
    """
    view = _view(ctx)
    if view is not None and view.section("fp8_config") and not _uses_fp8(ctx):
        precision = ctx.effective.launcher_mixed_precision.value or "no"  # as the launcher reads it
        yield Finding("accelerate", ("fp8_config",),
                      f"fp8_config is ignored with mixed_precision {precision!r}")


@rule("AW423", "fp8-override-precision-not-three-booleans", Severity.ERROR,
      fix="Write override_linear_precision as a list of three booleans: [false, false, false]")
def fp8_override_precision_not_three_booleans(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an fp8 run whose `fp8_config.override_linear_precision` is not a list of exactly three booleans,
    such as the string `"(false, false, false)"`.

    ## Why is this bad?
    The launcher exports items 0, 1 and 2 of the value as FP8_OVERRIDE_FPROP/DGRAD/WGRAD. For a string these
    are its first three characters (`(`, `f`, `a`), and the TransformerEngine recipe fails with
    `ValueError: invalid truth value (`; a shorter list fails in the launcher with an IndexError.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    mixed_precision: fp8
    fp8_config:
      backend: TE
      override_linear_precision: (false, false, false)
    ```
    Use instead: `override_linear_precision: [false, false, false]`.
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    mixed_precision: fp8
    fp8_config:
      backend: TE
      override_linear_precision: [false, false, false]
    ```
    """
    view = _view(ctx)
    found = _fp8(view, "override_linear_precision") if view is not None and _uses_fp8(ctx) else None
    if found is None:
        return
    value = found[1]
    if isinstance(value, str) or (isinstance(value, list) and len(value) != 3):
        yield Finding("accelerate", found[0],
                      f"override_linear_precision is {value!r}, not a list of three booleans")


@rule("AW424", "fp8-backend-incompatible", Severity.ERROR,
      fix="Use the TE or AO fp8 backend with FSDP, or turn off cpu_ram_efficient_loading for AO with FSDP2")
def fp8_backend_incompatible(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FP8 backends combined with settings they do not support: MS-AMP with FSDP, and torchao (AO) with
    FSDP2 and `fsdp_cpu_ram_efficient_loading`.

    ## Why is this bad?
    `Accelerator()` raises `NotImplementedError: accelerate + MS-AMP + FSDP is not supported` or "torchao with
    FSDP2 and cpu_ram_efficient_loading is not supported" in every process.

    ## Example
    ```yaml
    distributed_type: FSDP
    mixed_precision: fp8
    fp8_config:
      backend: MSAMP
    ```
    Use instead: `backend: TE`.
    ```yaml
    distributed_type: FSDP
    mixed_precision: fp8
    fp8_config:
      backend: TE
    ```
    """
    backend = ctx.effective.fp8_backend
    if not (_uses_fp8(ctx) and ctx.effective.is_fsdp):
        return
    if backend.value == "MSAMP":
        yield Finding("accelerate", backend.path, "the MS-AMP fp8 backend does not support FSDP")
    elif backend.value == "AO" and ctx.effective.fsdp_version.strict == 2 and ram_efficient_loading(ctx):
        yield Finding("accelerate", backend.path,
                      "the AO fp8 backend does not support FSDP2 with fsdp_cpu_ram_efficient_loading "
                      "(on by default)")


@rule("AW425", "dynamo-options-without-backend", Severity.WARNING,
      fix="Set dynamo_config.dynamo_backend (e.g. INDUCTOR), or remove the options")
def dynamo_options_without_backend(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `dynamo_config` options (mode, fullgraph, dynamic, regional compilation) set while the dynamo
    backend is `NO` or absent.

    ## Why is this bad?
    Without a backend accelerate does not call `torch.compile`, so the options have no effect; usually the
    backend line was forgotten.

    ## Example
    ```yaml
    dynamo_config:
      dynamo_mode: max-autotune
    ```
    Use instead: add `dynamo_backend: INDUCTOR`.
    ```yaml
    dynamo_config:
      dynamo_mode: max-autotune
      dynamo_backend: INDUCTOR
    ```
    """
    view = _view(ctx)
    if view is None or not view.section("dynamo_config"):
        return
    backend = section_entry(view, "dynamo_config", "dynamo_backend", "dynamo_")
    if backend is not None and not (isinstance(backend[1], str) and backend[1].upper() == "NO"):
        return
    for name, default in DYNAMO_OPTION_DEFAULTS.items():
        found = section_entry(view, "dynamo_config", name, "dynamo_")
        if found is not None and found[1] != default:
            yield Finding("accelerate", found[0], f"{name} has no effect without a dynamo backend")
