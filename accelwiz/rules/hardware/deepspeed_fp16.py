"""AW618: DeepSpeed refuses fp16 on GPUs older than Volta (compute capability below 7.0).

DeepSpeed 0.19.8, accelerator/cuda_accelerator.py `CUDA_Accelerator.is_fp16_supported`: fp16 needs compute
capability 7.0 or newer ("FP16 on compute capability 6.x is deprecated"), unless DS_ALLOW_DEPRECATED_FP16=1 lets 6.x
through; runtime/engine.py `DeepSpeedEngine._do_sanity_check` raises "Type fp16 is not supported." when
`fp16.enabled` is on and the accelerator says no. accelerate (mixed_precision fp16) and the Trainer (--fp16) turn
the JSON's fp16 on, so every road into DeepSpeed ends there.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.hardware._shared import precision_at, trains_on_gpus, uses_deepspeed
from accelwiz.rules.rule import Needs, rule

VOLTA = (7, 0)


@rule("AW618", "deepspeed-fp16-before-volta", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Train in fp32 (no fp16/bf16) on these GPUs, or set DS_ALLOW_DEPRECATED_FP16=1 on every node "
          "(compute capability 6.x only) and expect no speed-up")
def deepspeed_fp16_before_volta(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds fp16 (`fp16.enabled: true` in the DeepSpeed JSON, `mixed_precision: fp16` with DeepSpeed, or the
    Trainer's `--fp16` with `--deepspeed`) planned for NVIDIA GPUs with compute capability below 7.0: Pascal and
    older, such as P100, TITAN X(p) or GTX 1080 Ti.

    ## Why is this bad?
    DeepSpeed's CUDA accelerator reports fp16 as unsupported below compute capability 7.0 (`is_fp16_supported`),
    so `deepspeed.initialize` stops with "Type fp16 is not supported." on every rank, after the model is loaded
    (DeepSpeed#6723, on a TITAN X). The escape hatch DS_ALLOW_DEPRECATED_FP16=1 only covers 6.x, and
    these GPUs have no tensor cores to make fp16 worth it; bf16 is no way out either, as cuBLAS has no bf16
    matrix multiply on them (the same thread: CUBLAS_STATUS_NOT_SUPPORTED).

    ## Example
    ```json
    {"train_batch_size": 8, "fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```
    ```console
    accelwiz check --system 1xP100-PCIE-16GB ds_config.json
    ```
    Use instead: fp32 on these GPUs.
    ```json
    {"train_batch_size": 8, "fp16": {"enabled": false}, "zero_optimization": {"stage": 2}}
    ```
    """
    if not uses_deepspeed(ctx) or not trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus  # type: ignore[union-attr]
           if g.vendor == "nvidia" and tuple(g.compute_capability) < VOLTA]
    found = precision_at(ctx, "fp16") or _trainer_fp16(ctx)
    if old and found is not None:
        yield Finding(found[0], found[1], f"fp16 with DeepSpeed on {old[0].name} ({old[0].architecture}, "
                                          f"{len(old)} GPU(s)): DeepSpeed needs compute capability 7.0 for fp16 "
                                          "and stops with \"Type fp16 is not supported.\"")


def _trainer_fp16(ctx: CheckContext) -> tuple[Role | None, KeyPath] | None:
    """The Trainer's --fp16 (or the JSON's `"fp16": {"enabled": "auto"}` it fills with true) on a DeepSpeed run:
    the Trainer writes fp16.enabled true into the config it hands to DeepSpeed (integrations/deepspeed.py
    `HfTrainerDeepSpeedConfig.trainer_config_process`)."""
    from accelwiz.rules.trainer_view import trainer_view

    view = trainer_view(ctx)
    if view is None or view.path is None:
        return None
    resolution = view.resolution
    if view.args["fp16"] or (resolution is not None and resolution.filled.get("fp16.enabled") is True):
        return None, ()
    return None
