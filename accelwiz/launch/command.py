"""The exact `accelerate launch` command lines: built purely, shown by `--dry-run`, executed by `execute`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.launch import shell
from accelwiz.launch.environment import EnvChange, portable_changes
from accelwiz.launch.spec import LaunchSpec

if TYPE_CHECKING:
    from accelwiz.launch.threads import Threads

# Multi-node without a YAML value: c10d, as in accelerate's own SLURM example; `static` needs every node to agree
# on ranks up front and hangs silently when one is late (accelerate#1489).
MULTI_NODE_RDZV_BACKEND = "c10d"
DEFAULT_PORT = 29500
# Without main_process_ip in the YAML the printed lines read it from the environment at run time: the doctor part
# and the launch part both expand this one word, so a line pasted where the variable is not set stops before
# anything starts, with the shell's one line naming it (`bash: MAIN_PROCESS_IP: export MAIN_PROCESS_IP=...`; exit
# 127 from bash -c or a script, 1 at a prompt, which stays open). MASTER_ADDR, which the doctor alone would also
# read, cannot make one part pass and the other stop.
MAIN_IP_VARIABLE = "MAIN_PROCESS_IP"
MAIN_IP_SETTING = f"export {MAIN_IP_VARIABLE}=<address of machine 0>"
MAIN_IP_FROM_ENV = shell.Raw(f'"${{{MAIN_IP_VARIABLE}:?{MAIN_IP_SETTING} on every machine, then run the line again}}"')
# The module `accelwiz run` starts: `accelerate launch` in-process, keeping the failing rank's exit status and
# owning every process below it (launch/launcher.py). It takes accelerate launch's own arguments.
LAUNCHER_MODULE = "accelwiz.launch.launcher"

# Fail fast (issue 16.6). A multi-node job must end when any node fails, not wait for a timeout while the other
# nodes hold their GPUs: no restarts (torchrun's --max_restarts; accelerate's default is 0 too, written so that
# it is on the line), and a rendezvous that gives up after JOIN_TIMEOUT_S instead of torch's 600 s
# (torch/distributed/elastic/rendezvous: c10d reads `join_timeout` in dynamic_rendezvous.create_handler, static
# reads `timeout` in static_tcp_rendezvous.create_rdzv_handler). The nodes start together (srun, or by hand),
# so the wait is the slowest node's start-up.
JOIN_TIMEOUT_S = 120


def failure_flags(backend: str, is_host: str) -> list[str]:
    """torchrun's flags for a multi-node launch that fails fast. `is_host` ("1" on machine 0, "0" elsewhere, or
    a shell expansion) says which node hosts c10d's rendezvous store: torch otherwise guesses it from the
    address (c10d_rendezvous_backend._create_tcp_store, `_matches_machine_hostname`), and every node on one
    host (127.0.0.1) guesses yes and races for the port, where accelerate's own check on machine 0
    (utils/launch.py prepare_multi_gpu_env, is_port_in_use) refuses the port another node took first."""
    if backend != "c10d":
        return ["--max_restarts", "0", "--rdzv_conf", f"timeout={JOIN_TIMEOUT_S}"]
    conf = f"is_host={is_host},join_timeout={JOIN_TIMEOUT_S}"
    return ["--max_restarts", "0", "--rdzv_conf", shell.Raw(f'"{conf}"') if isinstance(is_host, shell.Raw) else conf]


def launcher_prefix() -> list[str]:
    """`accelerate launch` as this interpreter's module (wrapped, see LAUNCHER_MODULE): the same environment,
    whatever PATH says."""
    return [sys.executable, "-m", LAUNCHER_MODULE]


def yaml_ignored_flags(spec: LaunchSpec) -> list[str]:
    """Values accelerate reads from the YAML but never applies (argparse defaults win, accelerate.md N4).

    Passing them on the command line makes the file mean what it says.
    """
    flags = ["--rdzv_backend", spec.rdzv_backend] if spec.rdzv_backend else []
    if spec.same_network:
        flags.append("--same_network")
    return flags


def build_argv(
    config_path: Path,
    script: Path | str,
    script_args: Sequence[str] = (),
    *,
    spec: LaunchSpec | None = None,
    prefix: Sequence[str] | None = None,
    launcher_flags: Sequence[str] = (),
) -> list[str]:
    """The command `accelwiz run` executes; a list, never a shell string. `launcher_flags` are more of
    accelerate launch's own (`--num_cpu_threads_per_process N`)."""
    return [
        *(prefix if prefix is not None else launcher_prefix()),
        "--config_file",
        str(config_path),
        *(yaml_ignored_flags(spec) if spec is not None else []),
        *launcher_flags,
        str(script),
        *script_args,
    ]


def node_argv(
    spec: LaunchSpec,
    config_path: Path | str,
    script: Path | str,
    script_args: Sequence[str],
    *,
    machine_rank: str,
    main_process_ip: str,
    main_process_port: int | None = None,
    rdzv_backend: str | None = None,
    is_host: str | None = None,
    launcher_flags: Sequence[str] = (),
) -> list[str]:
    """One node's `accelerate launch` for a multi-node run, every topology value explicit. `machine_rank`,
    `main_process_ip` and `is_host` may be `shell.Raw` expansions (the sbatch script's per-task values);
    `is_host` defaults to machine_rank == 0."""
    backend = rdzv_backend or spec.rdzv_backend or MULTI_NODE_RDZV_BACKEND
    argv = [
        "accelerate",
        "launch",
        "--config_file",
        str(config_path),
        "--num_machines",
        str(spec.num_machines),
        "--num_processes",
        str(spec.num_processes),
        "--machine_rank",
        machine_rank,
        "--main_process_ip",
        main_process_ip,
        "--main_process_port",
        str(main_process_port or spec.main_process_port or DEFAULT_PORT),
        "--rdzv_backend",
        backend,
        *failure_flags(backend, is_host if is_host is not None else ("1" if machine_rank == "0" else "0")),
    ]
    if spec.same_network:
        argv.append("--same_network")
    if spec.uses_deepspeed:
        # one launch per node started by us (srun, ssh): DeepSpeed's default pdsh launcher would try to ssh into
        # every node itself and ignores main_process_ip/port (accelerate#1837, #953)
        argv += ["--deepspeed_multinode_launcher", "standard"]
    return [*argv, *launcher_flags, str(script), *script_args]


def node_commands(
    spec: LaunchSpec,
    config_path: Path | str,
    script: Path | str,
    script_args: Sequence[str] = (),
    *,
    env: Sequence[EnvChange] | None = None,
    rdzv_backend: str | None = None,
    cpu_nodes: bool | None = None,
    preflight: bool = True,
    threads: Threads | None = None,
    output_dir: Path | str | None = None,
    secret: str | None = None,
) -> list[str]:
    """The shell line to run on each node (rank 0 first), for clusters without a scheduler: runnable as printed
    by bash, from the directory the config's relative paths start in, with the environment the nodes need in
    front (and the address of machine 0 from $MAIN_PROCESS_IP when the YAML has none). Every value is one quoted
    word (`shell.quote`): nothing in a file name, a YAML value or an argument becomes shell code or reaches the
    terminal as a control sequence.

    `env` and `rdzv_backend` default to what the plan beside the config says (CPU machines get the CPU
    fallback for MULTI_GPU), then the YAML's rdzv_backend, then c10d. `cpu_nodes` overrides the plan's (a
    caller without a plan says what it knows of the machines). `threads` (CPU nodes) sets each process's threads
    (launch/threads.py); `output_dir` is the folder the preflight checks (the trainer's, not the working one).
    With the preflight, each line starts with `ACCELWIZ_DOCTOR_SECRET=<hex>`, the same on every node and new on
    each call (`secret`, else 16 random bytes): the doctors refuse any record not sealed with it (docs/doctor.md).
    """
    planned = planned_launch(config_path)
    if cpu_nodes is None:
        cpu_nodes = bool(planned.cpu_nodes)
    if env is None:
        env = portable_changes(spec, cpu_nodes=cpu_nodes)
    ip = spec.main_process_ip or MAIN_IP_FROM_ENV
    if threads is not None:
        env = [*env, EnvChange("OMP_NUM_THREADS", threads.word(), threads.reason)]
    prefix = [shell.Raw(f"{c.name}={shell.quote(c.value)}") for c in env]
    preflight = bool(planned.preflight and preflight)
    from accelwiz.doctor.wire import SECRET_ENV

    sealed = [shell.Raw(f"{SECRET_ENV}={shell.quote(secret or job_secret())}")] if preflight else []
    lines = []
    for rank in range(spec.num_machines):
        launch = [*prefix, *node_argv(spec, config_path, script, script_args, machine_rank=str(rank),
                                      main_process_ip=ip, rdzv_backend=rdzv_backend or planned.rdzv_backend,
                                      launcher_flags=threads.launcher_flags() if threads is not None else ())]
        if preflight:  # the secret in the doctor's environment only: the training launch never reads it
            launch = [*sealed, *with_preflight(spec, config_path, launch, main_process_ip=ip, node_rank=str(rank),
                                               output_dir=output_dir)]
        lines.append(shell.join(launch))
    return lines


def main_address_note(spec: LaunchSpec, config_path: Path | str) -> str | None:
    """What every machine needs before its printed line runs, said once above the lines: without main_process_ip
    in the YAML, the variable both parts of each line read (MAIN_IP_FROM_ENV) and how to set it."""
    if spec.main_process_ip or spec.num_machines <= 1:
        return None
    return (f"note: {shell.printable(str(config_path))} has no main_process_ip: each line reads machine 0's "
            f"address from ${MAIN_IP_VARIABLE}, so on each of the {spec.num_machines} machines first run "
            f"`{MAIN_IP_SETTING}` (the same address on all), then paste its line; a line pasted without it stops "
            f"before starting anything, naming {MAIN_IP_VARIABLE}")


def job_secret() -> str:
    """A fresh job secret for the doctors of one launch: 16 random bytes in hex, as the sbatch script draws its
    own from /dev/urandom (launch/slurm.py)."""
    import secrets

    return secrets.token_hex(16)


def refuse_deepspeed_file_beside_yaml_only(config_path: Path | str, who: str) -> None:
    """Every launch `run` makes (here, sbatch, printed node commands) runs from the directory `run` runs in, and
    accelerate's workers open `deepspeed_config_file` as written, relative to their working directory (AW203): a
    path that only resolves beside the YAML would fail in every worker (on every node, after the job waited in
    the queue). Refused, with the path that works from here; the YAML is the user's to edit. `who` says who
    opens it from where. Called once, by launch/run_request.py `plan_run`, for every way of launching."""
    path = Path(config_path)
    if not path.is_file():
        return  # nothing to read (a script rendered for a config that is not on this machine)
    from accelwiz.document import load_document
    from accelwiz.errors import InputError, UsageError
    from accelwiz.deepspeed_file import resolve_deepspeed_file

    try:
        document = load_document(path)
    except InputError:
        return  # preflight has reported it
    written = document.get("deepspeed_config", "deepspeed_config_file") if document.kind == "accelerate" else None
    if not isinstance(written, str) or not written.strip() or written.strip().lower() == "none":
        return
    reference = resolve_deepspeed_file(written.strip(), path)
    if reference.relative_to_yaml_only and reference.resolved is not None:
        resolved = reference.resolved.resolve()
        try:
            working = str(resolved.relative_to(Path.cwd()))
        except ValueError:
            working = str(resolved)
        raise UsageError(
            f"{path} names deepspeed_config_file {written.strip()!r}, which exists only beside the YAML "
            f"({reference.resolved}): {who} ({Path.cwd()}) and would not find it",
            hint=f"write `deepspeed_config_file: {working}` in {path} (relative to this directory, or absolute), "
                 "then run again",
        )


@dataclass(frozen=True)
class PlannedLaunch:
    """What the plan beside a config says about the machines a multi-node launch runs on (None: no plan)."""

    cpu_nodes: bool | None = None  # the plan's machines have no GPU
    rdzv_backend: str | None = None
    time_limit: str | None = None  # SLURM's --time, when the plan has one
    preflight: bool = True  # `accelwiz doctor` on every node before training


def planned_launch(config_path: Path | str) -> PlannedLaunch:
    from accelwiz.plan_file import find_plan, load_plan

    found = find_plan(Path(config_path))
    if found is None:
        return PlannedLaunch()
    plan = load_plan(found)
    return PlannedLaunch(plan.system.gpus_per_machine == 0, plan.launcher.rdzv_backend, plan.launcher.time_limit,
                         plan.launcher.preflight)


DEFAULT_MAIN_PORT = 29500  # accelerate launch's --main_process_port when the YAML has none


def with_preflight(spec: LaunchSpec, config: Path | str, launch: Sequence[str | shell.Raw], *,
                   main_process_ip: str | shell.Raw, node_rank: str | None,
                   output_dir: Path | str | None = None) -> list[str | shell.Raw]:
    """`accelwiz doctor ... && <launch>`: every node checks the allocation together (versions, GPUs, interfaces,
    the main port, shared folders, a test all-reduce) and only then trains; a mismatch ends every node within
    seconds with one table and a distinct exit code (docs/doctor.md), instead of a rendezvous that hangs.
    `node_rank` None: each srun task reads SLURM_PROCID. `output_dir`: the folder the trainer writes, which must
    be writable and shared (without it the doctor checks each node's working directory, which two nodes started
    from two folders never share)."""
    from accelwiz.doctor.command import preflight_line

    # machine 0's address from the job's environment where the launch line takes it from there: the very same
    # expansion (`"$MAIN_PROCESS_IP"` in the sbatch script, MAIN_IP_FROM_ENV in printed lines), unquoted here
    # because preflight_line double-quotes an expansion itself
    address = main_process_ip.strip('"') if isinstance(main_process_ip, shell.Raw) else main_process_ip
    doctor = preflight_line(nodes=spec.num_machines, main_address=address,
                            main_port=spec.main_process_port or DEFAULT_MAIN_PORT, node_rank=node_rank,
                            config=str(config), output_dir=output_dir)
    return [shell.Raw(doctor), shell.Raw("&&"), *launch]
