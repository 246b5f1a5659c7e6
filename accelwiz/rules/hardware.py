"""AW6xx: what the config asks of the machine that the machine (or its installed libraries) cannot give.

These rules need a machine profile (`check --system local|PRESET|FILE`). Facts a profile does not know are
skipped, never guessed: presets list no packages, so version rules stay silent for them, and only a local
probe can inspect an NVMe path on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.registry import rule

if TYPE_CHECKING:
    from accelwiz.probe.host import PathFacts

GPU_DISTRIBUTED = ("MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM")
FP8_BACKEND_PACKAGES = {"TE": "transformer_engine", "MSAMP": "msamp", "AO": "torchao"}
GIB = 1024**3
# Without --model the space an offload needs is unknown; below this much free space any NVMe offload of a
# model large enough to need one (billions of parameters, tens of GB of states) runs out.
NVME_MIN_FREE_BYTES = 10 * GIB
NVME_BYTES_PER_PARAMETER = {"optimizer": 12, "param": 2}  # fp32 master + Adam m and v; 16-bit weights


# --- reading the config defensively: any key may hold any type -------------------------------------------

def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _yaml(ctx: CheckContext, *path: str) -> Any:
    return ctx.accelerate.get(*path) if ctx.accelerate is not None else None


def _distributed_type(ctx: CheckContext) -> str | None:
    written = _text(_yaml(ctx, "distributed_type"))
    if written:
        return written.upper()
    return "DEEPSPEED" if ctx.accelerate is None and ctx.deepspeed is not None else None


def _trains_on_gpus(ctx: CheckContext) -> bool:
    """Whether the run will compute on the profile's GPUs (so their precision support matters)."""
    return bool(ctx.system and ctx.system.gpus) and _yaml(ctx, "use_cpu") is not True and \
        _distributed_type(ctx) != "MULTI_CPU"


def _gpu_hint(ctx: CheckContext) -> bool:
    """`distributed_type: 'NO'` is one process on GPU 0 when there is one; only GPU types imply a GPU."""
    return _distributed_type(ctx) in GPU_DISTRIBUTED


def _uses_deepspeed(ctx: CheckContext) -> bool:
    return _distributed_type(ctx) == "DEEPSPEED" or ctx.deepspeed is not None


def _precisions(ctx: CheckContext) -> Iterator[tuple[str, Role, KeyPath]]:
    """Each precision the files declare: ("bf16" | "fp16" | "fp8", file role, key path)."""
    if ctx.deepspeed is not None:
        for key, name in (("bf16", "bf16"), ("bfloat16", "bf16"), ("fp16", "fp16")):
            if ctx.deepspeed.get(key, "enabled") is True:
                yield name, "deepspeed", (key, "enabled")
    written = _text(_yaml(ctx, "mixed_precision"))
    if written and written.lower() in ("bf16", "fp16", "fp8"):
        yield written.lower(), "accelerate", ("mixed_precision",)


def _precision(ctx: CheckContext, name: str) -> tuple[Role, KeyPath] | None:
    return next(((role, path) for found, role, path in _precisions(ctx) if found == name), None)


def _gpu_list(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)


# --- GPUs and processes -----------------------------------------------------------------------------------

@rule("AW601", "gpu-distribution-without-gpu", Severity.ERROR, needs="system",
      fix="Train on a machine with GPUs; on CPU use `num_processes: 1`, or launch with `ACCELERATE_USE_CPU=true` "
          "(`accelwiz run` does this for MULTI_GPU)")
def gpu_distribution_without_gpu(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a GPU distributed type (MULTI_GPU, FSDP, DEEPSPEED) planned for a machine with no GPU.

    ## Why is this bad?
    Nothing stops the launch. With MULTI_GPU every process falls back to `DistributedType.NO` and trains
    alone, with no gradient synchronisation and no error; FSDP is never applied (or raises "no available
    devices" with `fsdp_sync_module_states`); DeepSpeed fails its batch-size assertion unless the script asks
    for the gloo backend.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    on a CPU-only machine. Use instead: a GPU machine; or, to test on CPU, keep MULTI_GPU and launch with
    `ACCELERATE_USE_CPU=true` (real 2-process DDP on gloo; `accelwiz run` sets it). `distributed_type: MULTI_CPU`
    is no way out: without an mpirun hostfile it silently starts one process (AW109).
    """
    system = ctx.system
    kind = _distributed_type(ctx)
    if system is None or system.gpus or system.topology.summary == "unknown" or kind not in GPU_DISTRIBUTED:
        return
    if _yaml(ctx, "use_cpu") is True:
        return
    consequence = {
        "MULTI_GPU": "every process runs alone as DistributedType.NO, with no gradient sync and no error",
        "FSDP": "FSDP is never applied: each process trains an unsharded copy, unsynchronised",
        "DEEPSPEED": "DeepSpeed needs InitProcessGroupKwargs(backend=\"gloo\") in the script to run on CPU",
    }.get(kind, "the launcher expects CUDA devices")
    role: Role = "accelerate" if ctx.accelerate is not None else "deepspeed"
    yield Finding(role, ("distributed_type",) if ctx.accelerate is not None else (),
                  f"`{kind}` on {system.name or 'this machine'}, which has no GPU: {consequence}")


@rule("AW602", "processes-exceed-gpus", Severity.ERROR, needs="system",
      fix="Set `num_processes` to GPUs per machine times `num_machines`")
def processes_exceed_gpus(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the processes each machine starts (`num_processes // num_machines`) with the GPUs it can see:
    the GPUs in the profile, or the ones `gpu_ids` selects.

    ## Why is this bad?
    Accelerate assigns `local_process_index % device_count()`, so extra processes silently share a GPU
    (two ranks on one device): each gets half the memory and the run is slower than with fewer processes
    (Accelerate defect N10; it used to fail with "invalid device ordinal").

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    on a machine with 4 GPUs. Use instead: `num_processes: 4`.
    """
    system = ctx.system
    processes = _int(_yaml(ctx, "num_processes"))
    machines = _int(_yaml(ctx, "num_machines")) or 1
    if system is None or not system.gpus or processes is None or machines < 1 or not _gpu_hint(ctx):
        return
    selected = _gpu_ids(ctx)
    visible = len(selected) if selected is not None else system.gpu_count
    per_machine = processes // machines
    if per_machine > visible:
        source = "`gpu_ids` selects" if selected is not None else f"{system.name or 'the machine'} has"
        yield Finding("accelerate", ("num_processes",),
                      f"{per_machine} processes per machine (num_processes {processes} / num_machines "
                      f"{machines}) but {source} {visible} GPU(s): ranks will share GPUs",
                      fix=f"Set `num_processes: {visible * machines}`")


def _gpu_ids(ctx: CheckContext) -> list[int] | None:
    """`gpu_ids` as a list of integers; None for absent, `all`, or anything unparseable."""
    value = _yaml(ctx, "gpu_ids")
    if _int(value) is not None:
        return [value]
    text = _text(value)
    if text is None or text.lower() == "all":
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return [int(p) for p in parts] if parts and all(p.isdigit() for p in parts) else None


@rule("AW603", "absent-gpu-ids", Severity.ERROR, needs="system",
      fix="List only GPUs that exist on the machine")
def absent_gpu_ids(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `gpu_ids` that name GPUs the machine does not have.

    ## Why is this bad?
    `accelerate launch` exports `gpu_ids` as `CUDA_VISIBLE_DEVICES`; CUDA drops an absent id and every id
    after it, so the run gets fewer GPUs than processes (shared GPUs) or none at all ("no CUDA GPUs are
    available").

    ## Example
    ```yaml
    gpu_ids: 0,1,2,3
    ```
    on a 2-GPU machine. Use instead: `gpu_ids: 0,1` or `gpu_ids: all`.
    """
    system = ctx.system
    ids = _gpu_ids(ctx)
    if system is None or ids is None or (not system.gpus and system.topology.summary == "unknown"):
        return
    present = {g.index for g in system.gpus} | {g.nvml_index for g in system.gpus if g.nvml_index is not None}
    absent = [i for i in ids if i not in present]
    if absent:
        have = f"GPUs {_gpu_list(sorted(present))}" if present else "no GPU"
        yield Finding("accelerate", ("gpu_ids",),
                      f"`gpu_ids` names GPU {_gpu_list(absent)}, but {system.name or 'the machine'} has "
                      f"{have}")


# --- precision --------------------------------------------------------------------------------------------

@rule("AW604", "emulated-bf16", Severity.WARNING, needs="system",
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
    mixed_precision: bf16
    ```
    on 8x V100. Use instead: `mixed_precision: fp16`.
    """
    found = _precision(ctx, "bf16")
    if found is None or not _trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.native_bf16]  # type: ignore[union-attr]
    if old:
        capability = ".".join(map(str, old[0].compute_capability))
        yield Finding(found[0], found[1], f"bf16 on {old[0].name} (compute capability {capability}, "
                                          f"{len(old)} GPU(s)) is emulated: no bf16 tensor cores before 8.0")


@rule("AW605", "fp8-without-fp8-gpu", Severity.ERROR, needs="system",
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
    mixed_precision: fp8
    ```
    on 8x A100. Use instead: `mixed_precision: bf16`.
    """
    found = _precision(ctx, "fp8")
    if found is None or not _trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.fp8]  # type: ignore[union-attr]
    if old:
        capability = ".".join(map(str, old[0].compute_capability))
        yield Finding(found[0], found[1], f"fp8 needs compute capability 8.9 or newer; {old[0].name} has "
                                          f"{capability}, so Accelerate falls back to fp16")


@rule("AW606", "fp8-backend-not-installed", Severity.ERROR, needs="system",
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
    mixed_precision: fp8
    fp8_config:
      backend: TE
    ```
    without transformer-engine installed. Use instead: `pip install transformer-engine[pytorch]`, or
    `backend: AO` with torchao installed.
    """
    found = _precision(ctx, "fp8")
    if found is None or ctx.system is None or not ctx.system.packages:
        return
    backend = _text(_yaml(ctx, "fp8_config", "backend"))
    wanted = FP8_BACKEND_PACKAGES.get(backend.upper()) if backend else None
    if wanted is not None:
        if ctx.system.package_missing(wanted):
            yield Finding("accelerate", ("fp8_config", "backend"),
                          f"`fp8_config.backend: {backend}` needs `{wanted}`, which is not installed")
        return
    installed = [name for name in FP8_BACKEND_PACKAGES.values() if ctx.system.packages.get(name)]
    if not installed and all(name in ctx.system.packages for name in FP8_BACKEND_PACKAGES.values()):
        yield Finding(found[0], found[1], "fp8 needs transformer_engine, torchao or msamp; none is installed")


@rule("AW607", "fp16-without-tensor-cores", Severity.INFO, needs="system",
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
    mixed_precision: fp16
    ```
    on a P100. Use instead: `mixed_precision: "no"` unless you need the memory.
    """
    found = _precision(ctx, "fp16")
    if found is None or not _trains_on_gpus(ctx):
        return
    old = [g for g in ctx.system.gpus if not g.tensor_cores]  # type: ignore[union-attr]
    if old:
        capability = ".".join(map(str, old[0].compute_capability))
        yield Finding(found[0], found[1], f"fp16 on {old[0].name} (compute capability {capability}) has no "
                                          "tensor cores to run on")


@rule("AW608", "mixed-gpu-models", Severity.WARNING, needs="system",
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
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    on a machine with an RTX 4090 and an RTX 3090. Use instead: `gpu_ids: 0` and one process, or equal GPUs.
    """
    if not _gpu_hint(ctx) or not _trains_on_gpus(ctx):
        return
    selected = _gpu_ids(ctx)
    gpus = [g for g in ctx.system.gpus if selected is None or g.index in selected]  # type: ignore[union-attr]
    models = sorted({g.name for g in gpus})
    if len(models) > 1:
        yield Finding("accelerate", ("distributed_type",),
                      f"the GPUs are different models ({', '.join(models)}): the slowest and smallest "
                      "sets the pace and the batch size")


# --- NVMe offload -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _NvmePath:
    path: str
    kind: str  # "optimizer" or "param"
    role: Role
    key: KeyPath


def _nvme_paths(ctx: CheckContext) -> Iterator[_NvmePath]:
    """Every NVMe offload path the files set for a device that is actually `nvme`."""
    yaml_ds = ctx.accelerate.section("deepspeed_config") if ctx.accelerate is not None else {}
    for kind in ("optimizer", "param"):
        path = _text(yaml_ds.get(f"offload_{kind}_nvme_path"))
        if yaml_ds.get(f"offload_{kind}_device") == "nvme" and path and path.lower() != "none":
            yield _NvmePath(path, kind, "accelerate", ("deepspeed_config", f"offload_{kind}_nvme_path"))
    zero = ctx.deepspeed.section("zero_optimization") if ctx.deepspeed is not None else {}
    for kind in ("optimizer", "param"):
        block = zero.get(f"offload_{kind}")
        path = _text(block.get("nvme_path")) if isinstance(block, dict) else None
        if isinstance(block, dict) and block.get("device") == "nvme" and path and path != "auto":
            yield _NvmePath(path, kind, "deepspeed", ("zero_optimization", f"offload_{kind}", "nvme_path"))


def _disk_facts(ctx: CheckContext, path: str) -> PathFacts | None:
    from accelwiz.probe.host import path_facts

    return path_facts(path, ctx.system) if ctx.system is not None else None


def _bytes_needed(ctx: CheckContext, kind: str) -> int | None:
    """Bytes one node writes for this offload, when --model gave a workload."""
    workload = ctx.workload
    count = getattr(workload, "trainable_parameters" if kind == "optimizer" else "model", None)
    if kind == "param":
        count = getattr(count, "num_parameters", None)
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    machines = max(ctx.system.num_machines if ctx.system else 1, 1)
    return count * NVME_BYTES_PER_PARAMETER[kind] // machines


@rule("AW609", "missing-nvme-offload-path", Severity.WARNING, needs="system",
      fix="Create the folder on the NVMe drive, or correct the path")
def missing_nvme_offload_path(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Checks, on the probed machine (`--system local`), that each NVMe offload `nvme_path` exists.

    ## Why is this bad?
    DeepSpeed creates the missing folders with `os.makedirs`, so a typo does not fail: the swap files land
    wherever the nearest existing parent lives, often the root disk, which is slow and may fill up. If that
    parent is not writable, the run fails at the first swap, after the model has been loaded.

    ## Example
    ```json
    "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvmee"}
    ```
    Use instead: the mount point of the NVMe drive, e.g. `/local_nvme`.
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is not None and facts.exists is False:
            where = f"; DeepSpeed would create it under {facts.nearest}" if facts.nearest else ""
            yield Finding(target.role, target.key, f"NVMe offload path `{target.path}` does not exist{where}")


@rule("AW610", "nvme-offload-off-nvme", Severity.WARNING, needs="system",
      fix="Point `nvme_path` at a local NVMe drive, or offload to `cpu` instead")
def nvme_offload_off_nvme(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds an NVMe offload `nvme_path` that sits on a disk that is not NVMe (a SATA SSD, a disk, a network
    volume), for a probed machine or a saved profile whose disk is that path's disk.

    ## Why is this bad?
    ZeRO-Infinity swaps optimizer states or parameters through the disk at every step; its throughput assumes
    several GB/s of NVMe bandwidth. On other disks each step waits for I/O, often several times slower than
    offloading to CPU memory.

    ## Example
    ```json
    "offload_param": {"device": "nvme", "nvme_path": "/home/me/offload"}
    ```
    with /home on a network volume. Use instead: `"nvme_path": "/local_nvme"`.
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is not None and facts.is_nvme is False:
            yield Finding(target.role, target.key,
                          f"NVMe offload path `{target.path}` is not on an NVMe device")


@rule("AW611", "nvme-offload-low-space", Severity.WARNING, needs="system",
      fix="Free space on the drive, or choose a larger NVMe drive")
def nvme_offload_low_space(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the free space at each NVMe offload path with what the offload writes: with `--model`, 12
    bytes per trainable parameter for the optimizer (fp32 weights and two Adam moments) and 2 bytes per
    parameter for the weights, per node; without it, a 10 GiB floor.

    ## Why is this bad?
    The swap files are written as training starts; a full disk fails the run with an I/O error after the model
    has been loaded, or fills the disk other jobs share.

    ## Example
    ```json
    "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvme"}
    ```
    with 4 GiB free for a 7B model (84 GB of optimizer state). Use instead: a drive with room for the states.
    """
    for target in _nvme_paths(ctx):
        facts = _disk_facts(ctx, target.path)
        if facts is None or facts.free_bytes is None:
            continue
        needed = _bytes_needed(ctx, target.kind)
        floor = needed if needed is not None else NVME_MIN_FREE_BYTES
        if facts.free_bytes < floor:
            what = f"the {target.kind} offload writes about {floor / GIB:.1f} GiB" if needed is not None \
                else f"under the {floor / GIB:.0f} GiB any offload of a model that needs one writes"
            yield Finding(target.role, target.key, f"NVMe offload path `{target.path}` has "
                                                   f"{facts.free_bytes / GIB:.1f} GiB free, {what}")


# --- installed library versions ---------------------------------------------------------------------------

@rule("AW612", "deepspeed-not-installed", Severity.ERROR, needs="system",
      fix="Install DeepSpeed: pip install deepspeed")
def deepspeed_not_installed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed config (`distributed_type: DEEPSPEED` or a DeepSpeed JSON) for a machine whose probe
    found no DeepSpeed installed.

    ## Why is this bad?
    `accelerate launch` fails at once ("DeepSpeed is not installed"), after the job has waited in the queue.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    ```
    in an environment without deepspeed. Use instead: `pip install deepspeed`, or another distributed type.
    """
    if ctx.system is None or not _uses_deepspeed(ctx) or not ctx.system.package_missing("deepspeed"):
        return
    role: Role = "accelerate" if ctx.accelerate is not None else "deepspeed"
    path: KeyPath = ("distributed_type",) if ctx.accelerate is not None else ()
    where = ctx.system.name or "the machine"
    yield Finding(role, path, f"the config uses DeepSpeed, which is not installed on {where}")


@rule("AW613", "fsdp2-with-old-torch", Severity.ERROR, needs="system",
      fix="Upgrade torch to 2.6 or newer, or use `fsdp_version: 1`")
def fsdp2_with_old_torch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_version: 2` when the installed torch is older than 2.6.

    ## Why is this bad?
    Accelerate raises "FSDP2 requires PyTorch >= 2.6.0" in every process, after launch.

    ## Example
    ```yaml
    fsdp_config:
      fsdp_version: 2
    ```
    with torch 2.5.1. Use instead: torch >= 2.6, or `fsdp_version: 1`.
    """
    version = _yaml(ctx, "fsdp_config", "fsdp_version")
    if ctx.system is None or _distributed_type(ctx) != "FSDP" or str(version).strip() != "2":
        return
    installed = ctx.system.installed_older_than("torch", "2.6")
    if installed:
        yield Finding("accelerate", ("fsdp_config", "fsdp_version"),
                      f"FSDP2 needs torch >= 2.6; {installed} is installed")


@rule("AW614", "nossh-launcher-with-old-deepspeed", Severity.ERROR, needs="system",
      fix="Upgrade DeepSpeed to 0.14.5 or newer, or use the `standard` launcher")
def nossh_launcher_with_old_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `deepspeed_multinode_launcher: nossh` when the installed DeepSpeed is older than 0.14.5.

    ## Why is this bad?
    `accelerate launch` refuses it ("nossh launcher requires DeepSpeed >= 0.14.5") on every node.

    ## Example
    ```yaml
    deepspeed_config:
      deepspeed_multinode_launcher: nossh
    ```
    with deepspeed 0.14.0. Use instead: deepspeed >= 0.14.5, or `deepspeed_multinode_launcher: standard`.
    """
    launcher = _text(_yaml(ctx, "deepspeed_config", "deepspeed_multinode_launcher"))
    if ctx.system is None or launcher is None or launcher.lower() != "nossh":
        return
    installed = ctx.system.installed_older_than("deepspeed", "0.14.5")
    if installed:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_multinode_launcher"),
                      f"the `nossh` launcher needs DeepSpeed >= 0.14.5; {installed} is installed")


@rule("AW615", "moe-layer-names-with-old-deepspeed", Severity.ERROR, needs="system",
      fix="Upgrade DeepSpeed to 0.14.0 or newer, or remove `deepspeed_moe_layer_cls_names`")
def moe_layer_names_with_old_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `deepspeed_moe_layer_cls_names` when the installed DeepSpeed is older than 0.14.0.

    ## Why is this bad?
    Accelerate needs `deepspeed.utils.set_z3_leaf_modules` for MoE leaf modules and raises an ImportError
    when the DeepSpeed plugin is created, in every process.

    ## Example
    ```yaml
    deepspeed_config:
      deepspeed_moe_layer_cls_names: MixtralSparseMoeBlock
    ```
    with deepspeed 0.13.1. Use instead: deepspeed >= 0.14.0.
    """
    names = _text(_yaml(ctx, "deepspeed_config", "deepspeed_moe_layer_cls_names"))
    if ctx.system is None or names is None:
        return
    installed = ctx.system.installed_older_than("deepspeed", "0.14.0")
    if installed:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_moe_layer_cls_names"),
                      f"MoE layer class names need DeepSpeed >= 0.14.0; {installed} is installed")


@rule("AW616", "num-machines-differs-from-system", Severity.INFO, needs="system",
      fix="Plan with the profile that matches the cluster, or set `num_machines` to its node count")
def num_machines_differs_from_system(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the config's `num_machines` with the node count of the preset, or of a profile that describes
    several nodes. A probe (live or saved) describes one node and says nothing about the cluster, so a
    one-node profile is not compared.

    ## Why is this bad?
    The plan (processes per node, memory per GPU, global batch) was made for a different cluster than the one
    the config launches on.

    ## Example
    ```yaml
    num_machines: 1
    num_processes: 8
    ```
    checked with `--system 2x8xH100`. Use instead: `num_machines: 2` and `num_processes: 16`.
    """
    system = ctx.system
    if system is None or ctx.accelerate is None or (system.source != "preset" and system.num_machines == 1):
        return
    machines = _int(_yaml(ctx, "num_machines"))
    configured = machines if machines is not None else 1
    if configured != system.num_machines:
        yield Finding("accelerate", ("num_machines",),
                      f"the config plans {configured} machine(s); {system.name or 'the profile'} has "
                      f"{system.num_machines}")
