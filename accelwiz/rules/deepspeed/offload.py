"""AW206-AW211: optimizer and parameter offload (device, NVMe path, partial offload) against the ZeRO
stage."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.config.base import AUTO
from accelwiz.effective import EffectiveValue
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import ZERO, zero_stage
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule


@rule("AW206", "param-offload-below-zero3", Severity.WARNING,
      fix="Set ZeRO stage 3, or set the parameter offload device to `none`")
def param_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds parameter offload (`offload_param` in the JSON, `offload_param_device` in the YAML) with a ZeRO
    stage below 3.

    ## Why is this bad?
    Only the ZeRO-3 optimizer reads `offload_param`. At stages 0-2 DeepSpeed accepts it and silently keeps the
    parameters on the GPU, so the memory the offload was meant to save is not saved (accelerate#2298).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 2
      offload_param_device: cpu
    ```
    Use instead: `zero_stage: 3`, or `offload_param_device: none`.
    ```yaml
    distributed_type: DEEPSPEED
    num_processes: 2
    deepspeed_config:
      zero_stage: 3
      offload_param_device: cpu
    ```
    """
    effective = ctx.effective
    stage, device = zero_stage(ctx), effective.offload_param
    if stage is not None and stage < 3 and device.value in ("cpu", "nvme"):
        yield Finding(device.role, device.path,
                      f"parameter offload to `{device.value}` needs ZeRO stage 3 (zero_stage is {stage}); it "
                      "is silently ignored")


@rule("AW207", "nvme-offload-without-path", Severity.ERROR, fix="Set `nvme_path` to a directory on a local "
                                                                "NVMe drive")
def nvme_offload_without_path(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds offload to `nvme` without an `nvme_path` in the DeepSpeed JSON, and NVMe offload set in the YAML's
    inline `deepspeed_config`.

    ## Why is this bad?
    DeepSpeed accepts `nvme_path: null` and crashes when it builds the swapper (`os.path.join(None, ...)`,
    DeepSpeed#2624). Through the YAML it is worse: `accelerate launch` never passes
    `offload_*_nvme_path` to the workers, so DeepSpeed receives the path `"none"` whatever the YAML says.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
    ```
    Use instead: `"offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}`, in a DeepSpeed JSON.
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}
    ```
    """
    effective = ctx.effective
    for kind in ("optimizer", "param"):
        device: EffectiveValue = getattr(effective, f"offload_{kind}")
        if device.value != "nvme" or not device.path:
            continue
        path: EffectiveValue = getattr(effective, f"offload_{kind}_nvme_path")
        if device.role == "deepspeed" and path.value is None and path.written != AUTO:  # accelerate fills "auto"
            yield Finding("deepspeed", device.path, f"`{ZERO}.offload_{kind}` offloads to nvme but has no `nvme_path`")
        elif device.role == "accelerate":  # the launcher lower-cases the device: NVME is nvme
            yield Finding("accelerate", device.path,
                          f"NVMe {kind} offload set in the YAML: accelerate never passes "
                          f"`offload_{kind}_nvme_path` to the workers, so DeepSpeed gets the path 'none'",
                          "Move the DeepSpeed settings into a JSON with `nvme_path` and name it in "
                          "`deepspeed_config_file`")


@rule("AW208", "nvme-optimizer-offload-below-zero3", Severity.WARNING,
      fix="Use ZeRO stage 3 for NVMe offload, or offload the optimizer to `cpu`")
def nvme_optimizer_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds optimizer offload to `nvme` with ZeRO stage 1 or 2.

    ## Why is this bad?
    ZeRO-1/2 only check that the offload device is not `none`: the optimizer state goes to CPU memory, not to
    the NVMe drive, so host RAM must hold it ("NVMe offloading is available only with ZeRO stage 3").

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}}
    ```
    Use instead: `"stage": 3`, or `"device": "cpu"`.
    ```json
    {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}}
    ```
    """
    stage, device = zero_stage(ctx), ctx.effective.offload_optimizer
    if stage in (1, 2) and device.value == "nvme":
        yield Finding(device.role, device.path,
                      f"optimizer offload to nvme at ZeRO stage {stage} silently offloads to CPU memory "
                      "instead")


@rule("AW209", "partial-offload-below-zero3", Severity.ERROR, fix='Remove `ratio`, or use `"stage": 3`')
def partial_offload_below_zero3(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `offload_optimizer.ratio` below 1 (partial, "twin-flow" offload) with a ZeRO stage other than 3.

    ## Why is this bad?
    DeepSpeed refuses the config: "Partial offloading only supported for ZeRO Stage 3."

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}}
    ```
    Use instead: `"stage": 3`, or drop `ratio`.
    ```json
    {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}}
    ```
    """
    ratio = ctx.effective.offload_optimizer_ratio.value
    stage = zero_stage(ctx)
    if ratio is not None and ratio < 1.0 and stage is not None and stage != 3:
        yield Finding("deepspeed", (ZERO, "offload_optimizer", "ratio"),
                      f"partial optimizer offload (ratio {ratio}) needs ZeRO stage 3 (zero_stage is {stage})")


@rule("AW210", "partial-offload-to-nvme", Severity.ERROR, fix='Use `"device": "cpu"` (with `"pin_memory": '
                                                              'true`)')
def partial_offload_to_nvme(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `offload_optimizer.ratio` below 1 with the offload device `nvme`.

    ## Why is this bad?
    Partial offload splits the optimizer step between the GPU and DeepSpeedCPUAdam; it works with CPU memory
    only. With NVMe the optimizer fails at initialisation: "RuntimeError: expected input to be on cuda"
    (DeepSpeed#4872; the maintainers' answer: device should be cpu).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/mnt/nvme", "ratio": 0.5}}}
    ```
    Use instead: `"offload_optimizer": {"device": "cpu", "pin_memory": true, "ratio": 0.5}`.
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true, "ratio": 0.5}}}
    ```
    """
    ratio = ctx.effective.offload_optimizer_ratio.value
    if ratio is not None and ratio < 1.0 and ctx.effective.offload_optimizer.value == "nvme":
        yield Finding("deepspeed", (ZERO, "offload_optimizer", "ratio"),
                      f"partial optimizer offload (ratio {ratio}) works only with device `cpu`, not `nvme`")


@rule("AW211", "optimizer-offload-at-stage0", Severity.WARNING,
      fix="Use ZeRO stage 1 or higher, or remove the optimizer offload")
def optimizer_offload_at_stage0(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds optimizer offload with ZeRO stage 0 (ZeRO disabled).

    ## Why is this bad?
    DeepSpeed accepts it, but without a ZeRO optimizer nothing reads the offload setting: the optimizer state
    stays on the GPU.

    ## Example
    ```json
    {"zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead: `"stage": 1` or higher.
    ```json
    {"zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu"}}}
    ```
    """
    device = ctx.effective.offload_optimizer
    if zero_stage(ctx) == 0 and device.value in ("cpu", "nvme"):
        yield Finding(device.role, device.path,
                      f"optimizer offload to `{device.value}` has no effect at ZeRO stage 0")
