"""`accelwiz run`'s launch plan: the checked config, the target (script or built-in trainer), its environment and
threads, and what a plan can do: write an sbatch file, print each node's command, print itself (`--dry-run`) or
execute. The plan is built by launch/run_request.py `plan_run`."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError, LaunchError
from accelwiz.launch import shell
from accelwiz.launch.command import build_argv, node_commands, planned_launch
from accelwiz.launch.environment import EnvChange, apply

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.launch.preflight import Preflight
    from accelwiz.launch.threads import Threads

TRAINER_SCRIPT = Path(__file__).resolve().parent.parent / "trainer" / "train.py"
TRAINER_MODULE = "accelwiz.trainer.train"
# User scripts run under this module so that their own exit status reaches the shell (see launch/child.py).
CHILD_MODULE = "accelwiz.launch.child"


@dataclass(frozen=True)
class TrainerFlags:
    """`accelwiz run` flags that belong to the built-in trainer (None/False = not given)."""

    steps: int | None = None
    micro_batch: int | None = None
    seq_len: int | None = None
    lr: float | None = None
    output_dir: Path | None = None
    resume: bool = False
    data: Path | None = None
    model: str | None = None
    gradient_accumulation: int | None = None
    method: str | None = None

    def given(self) -> list[str]:
        return ["--" + f.name.replace("_", "-") for f in fields(self) if getattr(self, f.name) not in (None, False)]

    def to_argv(self) -> list[str]:
        from accelwiz.trainer.options import TrainerOptions

        chosen = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in (None, False)}
        return TrainerOptions(**chosen).to_argv()


@dataclass(frozen=True)
class RunPlan:
    checked: Preflight
    target: list[str]  # what follows the launcher's own flags: the script (or -m module) and its args
    env: list[EnvChange]
    builtin_trainer: bool
    threads: Threads | None = None  # each process's CPU threads, for a launch here that trains on CPUs
    node_threads: Threads | None = None  # the same, computed on each node, for CPU nodes
    output_dir: Path | None = None  # the folder the built-in trainer writes (the preflight checks it)

    @property
    def launcher_flags(self) -> list[str]:
        return self.threads.launcher_flags() if self.threads is not None else []

    @property
    def argv(self) -> list[str]:
        return build_argv(self.checked.config_path, self.target[0], self.target[1:], spec=self.checked.spec,
                          launcher_flags=self.launcher_flags)

    @property
    def records_exit_status(self) -> bool:
        # a user script through launch/child.py; the built-in trainer records its own (trainer/train.py `entry`)
        return self.builtin_trainer or self.target[:2] == ["-m", CHILD_MODULE]

    def as_shell(self) -> str:
        """`--dry-run` (and the `$ ...` line before a launch): the `accelerate launch` line a user can copy and
        run as is, its environment in front. `run` itself starts accelerate's launcher in-process
        (LAUNCHER_MODULE) with exactly these arguments, to keep the failing rank's exit status."""
        env = [shell.Raw(f"{c.name}={shell.quote(c.value)}") for c in self.env]
        target = self.portable_target()
        argv = build_argv(self.checked.config_path, target[0], target[1:], spec=self.checked.spec,
                          prefix=["accelerate", "launch"], launcher_flags=self.launcher_flags)
        return shell.join([*env, *argv])

    def portable_target(self) -> list[str]:
        """The target for other machines: the built-in trainer by module name, not by this machine's path."""
        if self.builtin_trainer:
            return ["-m", TRAINER_MODULE, *self.target[1:]]
        return self.target[2:] if self.records_exit_status else self.target

    def node_commands(self, console: Console | None = None, *, preflight: bool = True) -> list[str]:
        """Each machine's line. Without a plan, the machines are taken to be like this one (the commands are
        printed on one of them): no GPU here means CPU DDP on gloo there (ACCELERATE_USE_CPU), said in a note;
        a plan beside the YAML says otherwise (`accelwiz init --system ...`)."""
        target = self.portable_target()
        from accelwiz.launch.command import planned_launch

        cpu_nodes = planned_launch(self.checked.config_path).cpu_nodes
        if cpu_nodes is None:
            from accelwiz.probe.profiles import load_system

            cpu_nodes = load_system("local").gpu_count == 0
            if console is not None and cpu_nodes and self.checked.spec.distributed_type == "MULTI_GPU":
                console.info("note: no plan beside the config, and this machine has no GPU: the lines train as CPU "
                             "DDP on gloo (ACCELERATE_USE_CPU=true); a plan for GPU machines (`accelwiz init "
                             "--system ...`) says otherwise")
        from accelwiz.launch.command import main_address_note

        note = main_address_note(self.checked.spec, self.checked.config_path)
        if console is not None and note is not None:  # said once, before the lines
            console.info(note)
        return node_commands(self.checked.spec, self.checked.config_path, target[0], target[1:],
                             cpu_nodes=cpu_nodes, preflight=preflight, output_dir=self.output_dir,
                             threads=self.node_threads if cpu_nodes or self.checked.spec.use_cpu else None)

    def write_sbatch(self, console: Console, path: Path, *, preflight: bool = True) -> None:
        from accelwiz.launch.slurm import render_sbatch

        text = render_sbatch(
            self.checked.spec,
            self.checked.config_path,
            self.portable_target(),
            env=self.env,
            preflight=preflight,
            threads=self.node_threads if planned_launch(self.checked.config_path).cpu_nodes or
            self.checked.spec.use_cpu else None,
            output_dir=self.output_dir,
        )
        from accelwiz.atomic import atomic_write

        shown = shell.printable(str(path))
        if not path.parent.is_dir():
            raise InputError(f"cannot write {shown}: the directory {shell.printable(str(path.parent))} does not "
                             f"exist", hint=f"create it first (mkdir -p {shell.quote(str(path.parent))}) or pick "
                                            "another path")
        try:
            atomic_write(path, text, create_parents=False, new_output=True)  # a planted link: refused
        except OSError as exc:
            raise InputError(f"cannot write {shown}: {exc.strerror or exc}",
                             hint="pick a path you can write to") from None
        console.info(f"wrote {shown}; submit it with: sbatch {shell.quote(str(path))}")

    def execute(self, console: Console) -> int:
        from importlib.util import find_spec

        if find_spec("accelerate") is None:
            raise LaunchError("accelerate is not installed", hint="pip install 'accelwiz[train]'")
        for change in self.env:
            console.info(f"setting {change}: {change.reason}")
        environ = apply(self.env, os.environ)
        if self.checked.spec.uses_deepspeed:
            from accelwiz.launch.build_locks import clear_stale_build_locks, extensions_folder

            for lock in clear_stale_build_locks(extensions_folder(environ)):
                console.warn(f"removed {lock}: an interrupted DeepSpeed op build left it, and the launch would "
                             "have waited for it forever")
        argv = self.argv
        console.info("$ " + self.as_shell())
        from accelwiz.launch.execute import execute

        received: list[int] = []
        if not self.records_exit_status:
            return interrupted(console, execute(argv, environ, received=received), received)
        import tempfile

        from accelwiz.rank_status import EXIT_DIR_ENV, recorded_status

        with tempfile.TemporaryDirectory(prefix="accelwiz-exit-") as exit_dir:
            code = execute(argv, {**environ, EXIT_DIR_ENV: exit_dir}, received=received)
            script_status = recorded_status(Path(exit_dir))
        # The launcher (launch/launcher.py) returns the first failing rank's status; the ranks' own records
        # (launch/child.py, the trainer's `entry`) are the fallback where a layer still reported a bare 1.
        return interrupted(console, script_status if code == 1 and script_status else code, received)


def interrupted(console: Console, code: int, received: list[int]) -> int:
    """After Ctrl-C (or a SIGTERM/SIGHUP to `run`): one line, and the status a shell gives (130 for Ctrl-C)."""
    if received:
        console.error(f"interrupted: the training processes were stopped (exit {code})")
    return code


def _built_in_trl_arguments(run: Any) -> Any:
    """A DPO/GRPO run of the built-in trainer (its flags or the plan's kind): the TRL arguments it will hand
    TRL's config, so the preflight judges the config that will be built. None for SFT."""
    from accelwiz.resolution.planned_trl import built_in_trl_arguments

    return built_in_trl_arguments(run.workload, run.post) if run is not None else None
