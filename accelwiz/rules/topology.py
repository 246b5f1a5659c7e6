"""AW101-AW102, AW109-AW113: processes, machines, and the keys `accelerate launch` reads but never applies.
How the machines meet (AW103-AW105) is in main_process.py, `gpu_ids` (AW106-AW108) in gpu_ids.py; what they
all read, in topology_view.py.

Everything here follows `accelerate launch` 1.15: `_validate_launch_command` merges the file into the
argparse namespace only where the namespace still holds None, then `launch_command` picks a launcher from
the distributed type (torchrun for MULTI_* / FSDP / MEGATRON_LM, DeepSpeed's launcher, or the "simple"
launcher that starts one Python process, optionally under mpirun).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz import coerce
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule
from accelwiz.rules.topology_view import lacks_multi_gpu_ids, machine_count, topology_view, written_processes
from accelwiz.vocab import MULTI_DEVICE_TYPES, SIMPLE_LAUNCHER_TYPES


@rule("AW101", "multi-device-single-process", Severity.WARNING,
      fix="Use `distributed_type: 'NO'` for one device, or raise num_processes to the number of devices")
def multi_device_single_process(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a MULTI_GPU (or other MULTI_* device) config that runs a single process on a single machine.

    ## Why is this bad?
    `accelerate launch` starts torchrun with one process: the run pays for a process group and DDP wrapping
    but uses one device. `accelerate config` refuses this combination ("only using 1 GPU on a single
    machine", #1743); hand-written files get through, usually because `num_processes` was meant to be
    the number of GPUs.

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 1
    ```
    Use instead: `distributed_type: 'NO'`, or `num_processes: 2` for two GPUs.
    ```yaml
    distributed_type: 'NO'
    num_processes: 1
    ```
    """
    view = topology_view(ctx)
    if view is None or view.distributed_type.value not in MULTI_DEVICE_TYPES:
        return
    if lacks_multi_gpu_ids(view):
        return  # AW106: accelerate refuses the file for that reason first
    if written_processes(view) == 1 and machine_count(view) == 1:
        yield Finding("accelerate", ("num_processes",),
                      f"`distributed_type: {view.distributed_type.value}` with one process on one machine")


@rule("AW102", "processes-not-divisible-by-machines", Severity.ERROR,
      fix="Make num_processes the total over all machines: num_machines x processes per machine")
def processes_not_divisible_by_machines(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a multi-node config whose `num_processes` is not a multiple of `num_machines`.

    ## Why is this bad?
    `num_processes` is the total over all machines, and accelerate starts `num_processes // num_machines`
    processes on every machine: the remainder is silently dropped, and machines with different device counts
    are not supported at all (accelerate#3894: 10 processes on 2 machines with 8 and 2 GPUs ran 5 + 5).

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    num_machines: 2
    num_processes: 9   # 8 GPUs on one node, 1 on the other
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    ```
    Use instead: the same number of processes on every machine, e.g. `num_processes: 2` (1 + 1).
    ```yaml
    distributed_type: MULTI_GPU
    num_machines: 2
    num_processes: 2
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    ```
    """
    view = topology_view(ctx)
    if view is None:
        return
    processes, machines = written_processes(view), machine_count(view)
    if processes is None or machines is None or machines < 2 or processes < 1 or processes % machines == 0:
        return
    yield Finding("accelerate", ("num_processes",),
                  f"num_processes ({processes}) is not a multiple of num_machines ({machines}): each "
                  f"machine starts {processes // machines}, {processes % machines} fewer in all")


@rule("AW109", "multi-cpu-without-hostfile", Severity.ERROR,
      fix="Set mpirun_config.mpirun_hostfile (and install MPI), or use another distributed type")
def multi_cpu_without_hostfile(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `distributed_type: MULTI_CPU` with more than one process but no `mpirun_config.mpirun_hostfile`.

    ## Why is this bad?
    accelerate starts MULTI_CPU runs with its simple launcher, which runs the script under `mpirun` only
    when a hostfile is given. Without one it starts a single process, with no error or warning.

    ## Example
    ```yaml
    distributed_type: MULTI_CPU
    num_processes: 4
    ```
    Use instead: add `mpirun_config: {mpirun_hostfile: /path/to/hostfile}`.
    ```yaml
    distributed_type: MULTI_CPU
    num_processes: 4
    mpirun_config: {mpirun_hostfile: /path/to/hostfile}
    ```
    """
    view = topology_view(ctx)
    if view is None or view.distributed_type.value != "MULTI_CPU":
        return
    processes = written_processes(view)
    if processes is not None and processes > 1 and not ctx.accelerate.get("mpirun_config", "mpirun_hostfile"):
        yield Finding("accelerate", ("distributed_type",),
                      f"MULTI_CPU with num_processes {processes} but no mpirun_config.mpirun_hostfile: "
                      "accelerate starts one process")


# Top-level keys that `accelerate launch` never copies from the file, because the argparse default is not
# None (the merge loop in launch.py only fills None): key -> (value the launcher uses, flag to pass instead,
# the distributed types whose launcher would read the key; None = every type).
LAUNCHER_IGNORED_KEYS: dict[str, tuple[object, str, frozenset[str] | None]] = {
    "rdzv_backend": ("static", "--rdzv_backend", None),
    "enable_cpu_affinity": (False, "--enable_cpu_affinity", None),
    "downcast_bf16": (False, "--downcast_bf16", frozenset({"XLA"})),
    "tpu_use_sudo": (False, "--tpu_use_sudo", frozenset({"XLA"})),
}


def _as_launcher_value(value: object, used: object) -> object:
    """The file's value in the launcher's terms: a flag in any of its spellings (the wizard writes 'yes'/'no')."""
    return coerce.flag(value) if isinstance(used, bool) else value


def _yaml(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@rule("AW110", "launcher-ignored-key", Severity.WARNING,
      fix="Remove the key and pass the command-line flag to `accelerate launch` instead")
def launcher_ignored_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds top-level keys that `accelerate launch` reads from the file but never applies — `rdzv_backend`,
    `enable_cpu_affinity`, `tpu_env`, and for TPU runs `downcast_bf16` and `tpu_use_sudo` — when their
    value differs from what the launcher uses anyway.

    ## Why is this bad?
    The launcher copies a file value only where its argparse default is None; these flags default to
    `"static"` or `False`, so the file's value is silently replaced (accelerate 1.15, N4). `rdzv_backend:
    c10d` still runs static rendezvous; `enable_cpu_affinity: true` binds nothing. `tpu_env` is never read
    at all. (`same_network` is ignored too, but for torchrun's static rendezvous the two settings behave the
    same, so it is not reported.)

    ## Example
    ```yaml
    rdzv_backend: c10d
    ```
    Use instead: `accelerate launch --rdzv_backend c10d ...`.
    """
    view = topology_view(ctx)
    if view is None:
        return
    for name, (used, flag, readers) in LAUNCHER_IGNORED_KEYS.items():
        value = ctx.accelerate.get(name)
        if not isinstance(value, (str, bool)) or (readers and view.distributed_type.value not in readers):
            continue
        if _as_launcher_value(value, used) != used:
            yield Finding("accelerate", (name,),
                          f"accelerate launch ignores `{name}: {_yaml(value)}` from the file and uses "
                          f"{_yaml(used)}", fix=f"pass `{flag}` on the command line instead")
    tpu_env = ctx.accelerate.get("tpu_env")
    if isinstance(tpu_env, list) and any(isinstance(item, str) and item.strip() for item in tpu_env):
        yield Finding("accelerate", ("tpu_env",), "accelerate never reads tpu_env: the variables are not set",
                      fix="export the variables in the environment that runs `accelerate launch`")


@rule("AW111", "num-processes-unset", Severity.INFO, fix="Set num_processes, or always pass --num_processes")
def num_processes_unset(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a config without a process count: `num_processes: -1`, or no `num_processes` with a distributed
    type other than `NO`.

    ## Why is this bad?
    accelerate's default is -1, and `accelerate launch` then stops with "You need to manually pass in
    `--num_processes` using this config yaml". That is fine for a SLURM template that always passes it, and
    a surprise otherwise.

    ## Example
    ```yaml
    distributed_type: FSDP
    ```
    Use instead: add `num_processes: 8` (the total over all machines).
    ```yaml
    distributed_type: FSDP
    num_processes: 8
    ```
    """
    view = topology_view(ctx)
    if view is not None and view.distributed_type.value is not None and view.launch_needs_num_processes:
        yield Finding("accelerate", ("num_processes",),
                      "num_processes is not set: `accelerate launch` needs --num_processes with this file")


@rule("AW112", "single-process-type-with-many-processes", Severity.WARNING,
      fix="Set num_processes: 1, or a distributed type that starts several processes (e.g. MULTI_GPU)")
def single_process_type_with_many_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `distributed_type: 'NO'` with `num_processes` greater than 1.

    ## Why is this bad?
    With a config file, `NO` always uses the simple launcher, which starts exactly one process: the other
    processes the file asks for never start (trl's packaged `single_gpu.yaml` asks for 8).

    ## Example
    ```yaml
    distributed_type: 'NO'
    num_processes: 8
    ```
    Use instead: `num_processes: 1`, or `distributed_type: MULTI_GPU` to use 8 GPUs.
    ```yaml
    distributed_type: 'NO'
    num_processes: 1
    ```
    """
    view = topology_view(ctx)
    processes = written_processes(view) if view else None
    if view is not None and view.distributed_type.value == "NO" and processes is not None and processes > 1:
        yield Finding("accelerate", ("num_processes",),
                      f"`distributed_type: 'NO'` starts one process, not num_processes ({processes})")


# Which distributed types read each section; a non-empty section under any other type is never used.
SECTION_READERS: dict[str, frozenset[str]] = {
    "deepspeed_config": frozenset({"DEEPSPEED"}),
    "fsdp_config": frozenset({"FSDP"}),
    "megatron_lm_config": frozenset({"MEGATRON_LM"}),
    "mpirun_config": SIMPLE_LAUNCHER_TYPES,
}


@rule("AW113", "section-for-another-distributed-type", Severity.WARNING,
      fix="Remove the section, or change distributed_type to the one that reads it")
def section_for_another_distributed_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a non-empty `deepspeed_config`, `fsdp_config`, `megatron_lm_config` or `mpirun_config` in a config
    whose `distributed_type` does not use it, such as `fsdp_config` under `DEEPSPEED`.

    ## Why is this bad?
    The launcher copies the keys onto its arguments and then never reads them: the settings look active but
    the run uses another strategy. Usually the `distributed_type` line is the mistake. (Empty `{}` sections,
    as older `accelerate config` versions wrote them, are fine.)

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    deepspeed_config:
      zero_stage: 3
    ```
    Use instead: `distributed_type: DEEPSPEED`, or remove `deepspeed_config`.
    ```yaml
    distributed_type: MULTI_GPU
    ```
    """
    view = topology_view(ctx)
    if view is None or view.distributed_type.value is None:
        return
    for section, readers in SECTION_READERS.items():
        if ctx.accelerate.section(section) and view.distributed_type.value not in readers:
            yield Finding("accelerate", (section,),
                          f"`{section}` is ignored with `distributed_type: {view.distributed_type.value}`")
