"""AW117/AW118: `use_cpu: true` with a type plain `accelerate launch` starts through torchrun: independent copies
(MULTI_<device>, AW117), or a backend that cannot train on CPU at all (FSDP, DeepSpeed, Megatron-LM, AW118).

accelerate 1.16's `launch_command` picks the launcher from the distributed type: `--multi_gpu` (every MULTI_<device>
type), FSDP and MEGATRON_LM go to `multi_gpu_launcher` (torchrun, one process per rank), DEEPSPEED to
`deepspeed_launcher`; only the `--cpu` flag (not the file's `use_cpu`) sends them to the simple launcher. The YAML's
`use_cpu` lands in `args.use_cpu`, which only the simple launcher turns into `ACCELERATE_USE_CPU`
(utils/launch.py, `prepare_simple_launcher_cmd_env`); `prepare_multi_gpu_env` never sets it. Each torchrun process
then builds its state without `cpu`, finds no CUDA backend and falls back to `DistributedType.NO`: rank 0 of 1,
every one of them (`PartialState._prepare_backend`). With `ACCELERATE_USE_CPU=true` in the launching environment
the same torchrun processes become MULTI_CPU on gloo, a real process group (tests/rules/test_launch_copies.py
launches both and reads the ranks).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.topology_view import machine_count, topology_view, written_processes
from accelwiz.vocab import MULTI_DEVICE_TYPES

TORCHRUN_TYPES = MULTI_DEVICE_TYPES | {"FSDP", "MEGATRON_LM", "DEEPSPEED"}
"""The types `accelerate launch` starts through torchrun (or DeepSpeed's launcher), never the simple launcher."""

# what each process does on a machine without GPUs, measured with accelerate 1.16 on this project's CPU machine
_ON_CPU = {
    "FSDP": "each process has no process group, and FSDP refuses the model (\"FSDP parameter initialization with "
            "`sync_module_states=True` is not supported on cpu\") or wraps an unsharded, unsynchronised copy",
    "DEEPSPEED": "DeepSpeed initialises NCCL, which has no device: the processes hang (no rank started in 120 s)",
    "MEGATRON_LM": "Megatron-LM needs CUDA devices",
}


@rule("AW117", "cpu-run-launched-as-copies", Severity.WARNING,
      fix="Launch with `ACCELERATE_USE_CPU=true accelerate launch --config_file FILE SCRIPT` (torchrun then starts "
          "real DDP on gloo; `accelwiz run` and the lines `init` prints set it), or drop `use_cpu` to train on the "
          "GPUs")
def cpu_run_launched_as_copies(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a YAML that asks for CPU training (`use_cpu: true`) with a MULTI_<device> distributed type (which
    `accelerate launch` starts through torchrun) and more than one process.

    ## Why is this bad?
    The file's `use_cpu` reaches only the simple launcher: torchrun's processes never get `ACCELERATE_USE_CPU`.
    Launched plainly, on a machine without GPUs each process reports "rank 0 of 1, DistributedType.NO": N
    unsynchronised trainings of the same model, N times the same checkpoint, exit 0; on a machine with GPUs
    `use_cpu` is ignored and the run takes the GPUs. No file alone does better: `distributed_type: MULTI_CPU`
    without an mpirun hostfile starts one process (AW109). So the file is right for CPU DDP only when the launch
    sets `ACCELERATE_USE_CPU=true`, as `accelwiz run` and the lines `init` prints do: a warning, which a launch
    through `accelwiz run` reports as handled.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    use_cpu: true
    ```
    launched as `accelerate launch --config_file accelerate.yaml train.py`. Use instead: the same file, launched
    as `ACCELERATE_USE_CPU=true accelerate launch --config_file accelerate.yaml train.py` (rank 0 and 1 of 2,
    MULTI_CPU on gloo); or, for the GPUs, no `use_cpu`:
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    """
    found = _cpu_multi_process(ctx)
    if found is None or found[0] not in MULTI_DEVICE_TYPES:
        return
    kind, processes = found
    handled = ("the launch sets ACCELERATE_USE_CPU=true, so the processes train together as CPU DDP on gloo"
               if ctx.launch.cpu_fallback else None)
    alone = (f"each of the {processes} processes runs alone as DistributedType.NO (rank 0 of 1): {processes} "
             "unsynchronised copies, exit 0")
    yield Finding("accelerate", ("use_cpu",), _message(ctx, kind, processes, alone), handled=handled)


@rule("AW118", "cpu-run-on-gpu-only-backend", Severity.ERROR,
      fix="Drop `use_cpu` to train on GPUs; for CPU DDP use `distributed_type: MULTI_GPU` launched with "
          "`ACCELERATE_USE_CPU=true`")
def cpu_run_on_gpu_only_backend(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `use_cpu: true` with FSDP, DEEPSPEED or MEGATRON_LM and more than one process.

    ## Why is this bad?
    `accelerate launch` starts these through torchrun (or DeepSpeed's launcher), which never passes `use_cpu` on,
    and none of them trains several CPU processes: measured with accelerate 1.16 on a machine without GPUs, FSDP
    refuses the model ("FSDP parameter initialization with `sync_module_states=True` is not supported on cpu"),
    DeepSpeed initialises NCCL and hangs (no rank started in 120 s); Megatron-LM needs CUDA devices. On a machine
    with GPUs `use_cpu` is ignored and the run takes the GPUs.

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    use_cpu: true
    ```
    Use instead (CPU DDP, launched with `ACCELERATE_USE_CPU=true`, as `accelwiz run` does):
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 2
    use_cpu: true
    ```
    """
    found = _cpu_multi_process(ctx)
    if found is None or found[0] in MULTI_DEVICE_TYPES:
        return
    kind, processes = found
    yield Finding("accelerate", ("use_cpu",), _message(ctx, kind, processes, _ON_CPU[kind]))


def _cpu_multi_process(ctx: CheckContext) -> tuple[str, int] | None:
    """(distributed type, processes) of a YAML asking for CPU training through a torchrun-started type."""
    view = topology_view(ctx)
    if view is None or view.use_cpu.strict is not True:
        return None
    kind = view.distributed_type.value
    processes, machines = written_processes(view), machine_count(view) or 1
    if kind not in TORCHRUN_TYPES or processes is None or processes < 2 or processes // machines < 1:
        return None
    return kind, processes


def _message(ctx: CheckContext, kind: str, processes: int, on_cpu: str) -> str:
    system = ctx.system
    where = (system.name or "this machine") if system is not None else None
    if system is not None and system.gpus:
        consequence = f"on {where}, which has {system.gpu_count} GPU(s), use_cpu is ignored and the run takes the GPUs"
    else:
        consequence = f"on {where}, which has no GPU, {on_cpu}" if where else f"without a GPU, {on_cpu}"
    return (f"`distributed_type: {kind}` with `use_cpu: true` and num_processes {processes}: `accelerate launch` "
            "starts them through torchrun, which never passes use_cpu on (only the simple launcher sets "
            f"ACCELERATE_USE_CPU); {consequence}")
