"""AW117: a YAML that plain `accelerate launch` starts as independent copies: a torchrun type with `use_cpu: true`.

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


@rule("AW117", "cpu-run-launched-as-copies", Severity.ERROR,
      fix="Launch with `ACCELERATE_USE_CPU=true accelerate launch --config_file FILE SCRIPT` (torchrun then starts "
          "real DDP on gloo; `accelwiz run` sets it), or drop `use_cpu` to train on the GPUs")
def cpu_run_launched_as_copies(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a YAML that asks for CPU training (`use_cpu: true`) with a distributed type `accelerate launch` starts
    through torchrun (MULTI_GPU and the other MULTI_<device> types, FSDP, MEGATRON_LM, DEEPSPEED) and more than one
    process.

    ## Why is this bad?
    The file's `use_cpu` reaches only the simple launcher: torchrun's processes never get `ACCELERATE_USE_CPU`.
    On a machine without GPUs each MULTI_GPU process reports "rank 0 of 1, DistributedType.NO": N unsynchronised
    trainings of the same model, N times the same checkpoint, exit 0. On a machine with GPUs `use_cpu` is ignored
    and the run takes the GPUs. `accelerate config` never writes this pair (it sets `use_cpu` only for NO and
    MULTI_CPU); `distributed_type: MULTI_CPU` is no way out: without an mpirun hostfile it starts one process
    (AW109).

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
    view = topology_view(ctx)
    if view is None or view.use_cpu.strict is not True:
        return
    kind = view.distributed_type.value
    processes, machines = written_processes(view), machine_count(view) or 1
    if kind not in TORCHRUN_TYPES or processes is None or processes < 2 or processes // machines < 1:
        return
    system = ctx.system
    where = (system.name or "this machine") if system is not None else None
    if system is not None and system.gpus:
        consequence = f"on {where}, which has {system.gpu_count} GPU(s), use_cpu is ignored and the run takes the GPUs"
    else:
        alone = _ON_CPU.get(kind, f"each of the {processes} processes runs alone as DistributedType.NO (rank 0 of "
                                  f"1): {processes} unsynchronised copies, exit 0")
        consequence = f"on {where}, which has no GPU, {alone}" if where else f"without a GPU, {alone}"
    handled = ("the launch sets ACCELERATE_USE_CPU=true, so the processes train together as CPU DDP on gloo"
               if ctx.launch.cpu_fallback and kind in MULTI_DEVICE_TYPES else None)
    fix = None if kind in MULTI_DEVICE_TYPES else (
        f"Drop `use_cpu` to train with {kind} on GPUs; for CPU DDP use `distributed_type: MULTI_GPU` launched with "
        "`ACCELERATE_USE_CPU=true`")
    yield Finding("accelerate", ("use_cpu",),
                  f"`distributed_type: {kind}` with `use_cpu: true` and num_processes {processes}: `accelerate "
                  "launch` starts them through torchrun, which never passes use_cpu on (only the simple launcher "
                  f"sets ACCELERATE_USE_CPU); {consequence}", fix=fix, handled=handled)
