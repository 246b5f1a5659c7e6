"""AW604-AW608: precision the GPUs cannot compute natively, fp8 without hardware or backend, mixed GPU models."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.hardware._shared import (
    FP8_BACKEND_PACKAGES,
    gpu_hint,
    gpu_ids,
    precision_at,
    trains_on_gpus,
)
from accelwiz.rules.rule import Needs, rule


@rule("AW604", "emulated-bf16", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Use `mixed_precision: fp16` (with loss scaling) on GPUs older than Ampere")
def emulated_bf16(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds bf16 (`mixed_precision: bf16`, or `bf16.enabled: true` in the DeepSpeed JSON) planned for GPUs older
    than Ampere (compute capability below 8.0: V100, T4, RTX 20xx), which have no bf16 tensor cores.

    ## Why is this bad?
    Nothing refuses it: `torch.cuda.is_bf16_supported()` answers True because it counts emulation, so
    Accelerate's check passes (accelerate#1693). The matrix multiplies then run emulated, several times slower
    than fp16 on the same GPU.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB
    distributed_type: MULTI_GPU
    num_processes: 8
    mixed_precision: bf16
    ```
    on 8x V100. Use instead:
    ```yaml
    # accelwiz check --system 8xV100-32GB
    distributed_type: MULTI_GPU
    num_processes: 8
    mixed_precision: fp16
    ```
    """
    found = precision_at(ctx, "bf16")
    if found is None or not trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.native_bf16]  # type: ignore[union-attr]
    if old:
        yield Finding(found[0], found[1], f"bf16 on {old[0].name} ({old[0].architecture}, "
                                          f"{len(old)} GPU(s)) is emulated: no bf16 tensor cores before 8.0")


@rule("AW605", "fp8-without-fp8-gpu", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Use `mixed_precision: bf16`, or train on Ada/Hopper GPUs (compute capability 8.9 or newer)")
def fp8_without_fp8_gpu(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `mixed_precision: fp8` planned for GPUs with compute capability below 8.9 (anything before Ada and
    Hopper, including A100).

    ## Why is this bad?
    Accelerate logs a warning and silently trains in fp16 instead (`state.py`), so the run neither gets fp8
    speed nor the bf16 range you may have expected.

    ## Example
    ```yaml
    # accelwiz check --system 8xA100-80GB
    distributed_type: MULTI_GPU
    num_processes: 8
    mixed_precision: fp8
    fp8_config:
      backend: TE
    ```
    on 8x A100. Use instead: `mixed_precision: bf16`.
    ```yaml
    # accelwiz check --system 8xA100-80GB
    distributed_type: MULTI_GPU
    num_processes: 8
    mixed_precision: bf16
    ```
    """
    found = precision_at(ctx, "fp8")
    if found is None or not trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.fp8]  # type: ignore[union-attr]
    if old:
        yield Finding(found[0], found[1], "fp8 needs compute capability 8.9 or newer (AMD: gfx942 or newer); "
                                          f"{old[0].name} has {old[0].architecture.removeprefix('compute capability ')}"
                                          ", so Accelerate falls back to fp16")


@rule("AW606", "fp8-backend-not-installed", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Install an fp8 backend: transformer-engine, torchao or MS-AMP")
def fp8_backend_not_installed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `mixed_precision: fp8` when the machine has none of the fp8 backends Accelerate can use
    (Transformer Engine, torchao, MS-AMP), or lacks the one `fp8_config.backend` names.

    ## Why is this bad?
    `accelerate launch` stops with "FP8 is not available on this machine", or the script raises when the
    `Accelerator` is created, after the job has been queued and scheduled.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB.json
    distributed_type: MULTI_GPU
    num_processes: 8
    mixed_precision: fp8
    fp8_config:
      backend: TE
    ```
    on an H100 node whose profile (saved with `accelwiz probe --save`) shows no transformer-engine installed.
    Use instead: `pip install transformer-engine[pytorch]`, or
    `backend: AO` with torchao installed.
    """
    found = precision_at(ctx, "fp8")
    if found is None or ctx.system is None or not ctx.system.packages:
        return
    written = ctx.effective.fp8_backend  # `backend` or `fp8_backend`: the launcher adds the prefix
    backend = written.value
    wanted = FP8_BACKEND_PACKAGES.get(backend.upper()) if backend else None
    if wanted is not None:
        if ctx.system.package_missing(wanted):
            yield Finding("accelerate", written.path,
                          f"`fp8_config.backend: {backend}` needs `{wanted}`, which is not installed")
        return
    installed = [name for name in FP8_BACKEND_PACKAGES.values() if ctx.system.packages.get(name)]
    if not installed and all(name in ctx.system.packages for name in FP8_BACKEND_PACKAGES.values()):
        yield Finding(found[0], found[1], "fp8 needs transformer_engine, torchao or msamp; none is installed")


@rule("AW607", "fp16-without-tensor-cores", Severity.INFO, needs=Needs.SYSTEM,
      fix="Expect little speed-up from fp16 here; keep it only to save memory")
def fp16_without_tensor_cores(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds fp16 planned for GPUs without tensor cores (compute capability below 7.0: Pascal and older, such
    as P100 or GTX 10xx).

    ## Why is this bad?
    fp16 still halves activation memory, but without tensor cores the matrix multiplies gain little or
    nothing over fp32, while loss scaling adds overhead and overflow risk.

    ## Example
    ```yaml
    # accelwiz check --system 1xP100.json
    distributed_type: 'NO'
    num_processes: 1
    mixed_precision: fp16
    ```
    on a P100 (its profile, saved with `accelwiz probe --save`).
    Use instead: `mixed_precision: "no"` unless you need the memory.
    ```yaml
    # accelwiz check --system 1xP100.json
    distributed_type: 'NO'
    num_processes: 1
    mixed_precision: "no"
    ```
    """
    found = precision_at(ctx, "fp16")
    if found is None or not trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.tensor_cores]  # type: ignore[union-attr]
    if old:
        yield Finding(found[0], found[1], f"fp16 on {old[0].name} ({old[0].architecture}) has no "
                                          "tensor cores to run on")


@rule("AW608", "mixed-gpu-models", Severity.WARNING, needs=Needs.SYSTEM,
      fix="Restrict the run to identical GPUs with `gpu_ids` or CUDA_VISIBLE_DEVICES")
def mixed_gpu_models(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a multi-GPU run on a machine whose GPUs are not all the same model.

    ## Why is this bad?
    Data-parallel ranks wait for each other at every step, so the slowest GPU sets the pace, and the
    smallest one sets the batch size that fits. Precision support may differ too (bf16 native on one, emulated
    on another), and CUDA's default device order differs from `nvidia-smi`'s when models differ.

    ## Example
    ```yaml
    # accelwiz check --system mixed_4090_3090.json
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    on a machine with an RTX 4090 and an RTX 3090 (its profile, saved with `accelwiz probe --save`).
    Use instead: `gpu_ids: 0` and one process, or equal GPUs.
    ```yaml
    # accelwiz check --system mixed_4090_3090.json
    distributed_type: 'NO'
    num_processes: 1
    gpu_ids: '0'
    ```
    """
    if not gpu_hint(ctx) or not trains_on_gpus(ctx):
        return
    selected = gpu_ids(ctx)
    gpus = [g for g in ctx.system.gpus if selected is None or g.index in selected]  # type: ignore[union-attr]
    models = sorted({g.name for g in gpus})
    if len(models) > 1:
        yield Finding("accelerate", ("distributed_type",),
                      f"the GPUs are different models ({', '.join(models)}): the slowest and smallest "
                      "sets the pace and the batch size")
