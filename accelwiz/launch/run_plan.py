"""`accelwiz run` from flags to a launch plan: preflight, target (script or built-in trainer), command, env.

The command module stays thin: it builds `TrainerFlags`, calls `plan_run`, then asks the plan to write an
sbatch file, print node commands, print itself (`--dry-run`) or execute.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError, LaunchError, UsageError
from accelwiz.launch import shell
from accelwiz.launch.command import build_argv, node_commands, planned_launch, refuse_deepspeed_file_beside_yaml_only
from accelwiz.launch.environment import EnvChange, apply
from accelwiz.launch.preflight import Preflight, preflight, render_summary
from accelwiz.launch.run_workload import trainer_output_dir, trainer_run
from accelwiz.launch.threads import launch_threads
from accelwiz.rules.diagnostic import Severity

if TYPE_CHECKING:
    from accelwiz.console import Console
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


# Who opens the YAML's deepspeed_config_file, from where: every way `run` launches starts the workers in the
# directory `run` runs in (or the job's submit directory, the same one), never beside the YAML (issue 16.7).
# Refusing beats running the workers beside the YAML: the script, --data and --output-dir keep meaning what
# they mean here, and the YAML, which the user edits, says one thing for every launcher.
OPENED_FROM = {
    "here": "the training processes open it from the directory `run` runs in",
    "slurm": "the job opens it from the submit directory",
    "nodes": "each node opens it from the directory the commands run in",
}


def interrupted(console: Console, code: int, received: list[int]) -> int:
    """After Ctrl-C (or a SIGTERM/SIGHUP to `run`): one line, and the status a shell gives (130 for Ctrl-C)."""
    if received:
        console.error(f"interrupted: the training processes were stopped (exit {code})")
    return code


def plan_run(
    console: Console,
    *,
    config: Path | None,
    script: Path | None,
    script_args: list[str],
    trainer: TrainerFlags,
    force: bool,
    here: bool = True,
    mode: str | None = None,
    explain: bool = False,
    threads_per_process: int | None = None,
) -> RunPlan:
    """Check the config (refusing on errors unless forced), print the summary, and build the plan.

    `here` is False for plans run on other machines (`--slurm`, `--print-node-commands`): a login node's
    hardware says nothing about the cluster's, so the check runs without a machine profile. `mode` ("here",
    "slurm", "nodes") names the launch in the one-line refusals. A refusal is one line with a hint; the table of
    effective values follows a preflight that passed, or comes first with `explain`.
    """
    from accelwiz.defaults import DEFAULT_CONFIG
    from accelwiz.launch.values import check_file_names, check_launch_values

    check_file_names([config or DEFAULT_CONFIG, script])
    if script is not None and not script.is_file() and str(script).startswith("-"):
        # `run` passes options it does not know on as positional arguments (a script's own flags); with no script
        # before them they are the built-in trainer's (`accelwiz run -- --save-every 5`), or a typo
        script, script_args = None, [str(script), *script_args]
    if script is not None and trainer.given():
        raise UsageError(
            f"{', '.join(trainer.given())} belong to the built-in trainer, not to {script}",
            hint=f"pass your script's own flags after `--`: accelwiz run {shlex.quote(str(script))} -- --steps 100",
        )
    if script is not None and not script.is_file():
        raise InputError(f"training script `{script}` not found")
    trainer_argv = builtin_trainer_argv(trainer, script_args) if script is None else []
    from accelwiz.probe.profiles import load_system

    system = load_system("local") if here else None  # a launch here is checked against this machine
    builtin = script is None
    config_path = config or DEFAULT_CONFIG
    run = trainer_run(config_path, trainer_argv) if builtin else None
    from accelwiz.config.training_args import trainer_arguments_for_script

    # a Trainer script's own arguments (`run train.py -- --bf16 ...`) are checked against the YAML and JSON too
    trainer_args = trainer_arguments_for_script(script, script_args) if script is not None else \
        _built_in_trl_arguments(run)
    checked = preflight(config_path, system=system, builtin_trainer=builtin, here=here,
                        training_args=trainer_args, run=run)
    # before anything is shown: a value no launcher takes, or a DeepSpeed JSON the workers cannot open from
    # where they start, is one line and exit 2, --force or not
    check_launch_values(checked.spec, checked.config_path)
    refuse_deepspeed_file_beside_yaml_only(checked.config_path, OPENED_FROM[mode or ("here" if here else "nodes")])
    threads, node_threads = launch_threads(console, checked, here=here, given=threads_per_process)
    if explain:  # the table first, so that it stands before a refusal too
        console.info(_for_terminal(render_summary(checked, threads)))
    _report_findings(console, checked, force=force)
    if builtin and here:  # the weights, --data, QLoRA: refused in one line before the table (issue 30.6)
        from accelwiz.trainer.inputs import check_inputs
        from accelwiz.trainer.options import parse_args

        check_inputs(parse_args(["--config", str(checked.config_path), *trainer_argv]),
                     uses_deepspeed=checked.spec.uses_deepspeed)
    if not explain:
        console.info(_for_terminal(render_summary(checked, threads if here else node_threads)))
    # The built-in trainer reads the plan and DeepSpeed JSON of the YAML it is launched with (trainer/settings.py).
    trainer_target = [str(TRAINER_SCRIPT), "--config", str(checked.config_path), *trainer_argv]
    target = trainer_target if builtin else ["-m", CHILD_MODULE, str(script), *script_args]
    env = [*checked.env, *([EnvChange("OMP_NUM_THREADS", threads.word(), threads.reason)] if threads else [])]
    output_dir = trainer_output_dir(trainer_argv) if builtin else None
    return RunPlan(checked, target, env, builtin_trainer=builtin, threads=threads, node_threads=node_threads,
                   output_dir=output_dir)


def _built_in_trl_arguments(run: Any) -> Any:
    """A DPO/GRPO run of the built-in trainer (its flags or the plan's kind): the TRL arguments it will hand
    TRL's config, so the preflight judges the config that will be built. None for SFT."""
    from accelwiz.resolution.planned_trl import built_in_trl_arguments

    return built_in_trl_arguments(run.workload, run.post) if run is not None else None


def _for_terminal(text: str) -> str:
    return shell.printable(text, keep_newlines=True)


def builtin_trainer_argv(trainer: TrainerFlags, extra: list[str]) -> list[str]:
    """run's trainer flags and any others (`-- --save-every 5`), checked now by the trainer's own parser.

    A typo fails here with one line, not in every worker after the launch. `-- --help` prints the trainer's
    options and exits 0.
    """
    import contextlib
    import io

    from accelwiz.trainer.options import parse_args

    argv = [*trainer.to_argv(), *extra]
    talk = io.StringIO()
    try:
        with contextlib.redirect_stderr(talk):
            parse_args(argv)
    except SystemExit as exc:
        if not exc.code:
            raise
        problem = talk.getvalue().strip().splitlines()[-1].partition("error: ")[2]
        raise UsageError(
            f"built-in trainer: {problem}",
            hint="`accelwiz run --help` lists run's options, `accelwiz run -- --help` all of the trainer's",
        ) from None
    return argv


def _report_findings(console: Console, checked: Preflight, *, force: bool) -> None:
    """The findings, then a note for each the launch makes moot (the rules judged that from the launch facts)."""
    from accelwiz.rules.report import render_text, summary

    # Suggestions (infos) are for `accelwiz check`; a launch shows what can go wrong, and counts the rest.
    shown = [d for d in checked.diagnostics if d.severity is not Severity.INFO]
    suggestions = sum(d.severity is Severity.INFO for d in checked.diagnostics)
    if shown:
        plain = render_text(shown, color=False)
        # a hostile value quoted in a finding is shown escaped (and then without colour, whose codes are ours)
        console.info(render_text(shown, color=console.color) if plain == _for_terminal(plain) else _for_terminal(plain))
        console.info(summary(shown))
    if suggestions:
        plural = "s" if suggestions > 1 else ""
        console.info(f"{suggestions} suggestion{plural}: see `accelwiz check {checked.config_path}`")
    for diagnostic in checked.handled:
        console.info(f"note: {diagnostic.code} ({diagnostic.name}) handled: {diagnostic.handled}")
    errors = checked.errors
    if errors and not force:
        count = len(errors)
        raise LaunchError(
            f"not launching: {checked.config_path} has {count} error{'s' if count > 1 else ''}",
            hint="fix them (see above), or pass --force to launch anyway",
        )
    if errors:
        console.warn(f"launching despite {len(errors)} error(s) because of --force")
