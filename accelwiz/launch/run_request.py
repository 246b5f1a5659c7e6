"""`accelwiz run` as a use case: a `RunRequest` (what the flags ask) in, the exit status out.

`run_for` plans the run once (`plan_run`: the target, the preflight, the refusals, the summary) and then does the
one thing the request asks of the plan (launch/run_plan.py `RunPlan`): write an sbatch script, print each node's
line, print the launch line (`--dry-run`) or launch here. The typer command (cli/run.py) only builds the request.
`run` talks while it works (the summary before a launch that may take hours, the launch's own output), so the
console is passed in rather than a result rendered afterwards.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from accelwiz.errors import InputError, LaunchError, UsageError
from accelwiz.launch import shell
from accelwiz.launch.run_plan import CHILD_MODULE, TRAINER_SCRIPT, RunPlan, TrainerFlags, _built_in_trl_arguments

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.launch.preflight import Preflight
    from accelwiz.launch.threads import Threads


# Who opens the YAML's deepspeed_config_file, from where: every way `run` launches starts the workers in the
# directory `run` runs in (or the job's submit directory, the same one), never beside the YAML (issue 16.7).
# Refusing beats running the workers beside the YAML: the script, --data and --output-dir keep meaning what
# they mean here, and the YAML, which the user edits, says one thing for every launcher.
OPENED_FROM = {
    "here": "the training processes open it from the directory `run` runs in",
    "slurm": "the job opens it from the submit directory",
    "nodes": "each node opens it from the directory the commands run in",
}


@dataclass(frozen=True)
class RunRequest:
    """What `accelwiz run` is asked (None/False: not given)."""

    config: Path | None = None
    script: Path | None = None
    script_args: tuple[str, ...] = ()  # the script's own flags, or more of the built-in trainer's, after `--`
    trainer: TrainerFlags = field(default_factory=TrainerFlags)
    force: bool = False
    explain: bool = False
    dry_run: bool = False
    slurm: Path | None = None
    print_node_commands: bool = False
    preflight: bool = True
    threads_per_process: int | None = None

    @property
    def mode(self) -> str:
        """Where the run starts: "here", "slurm" or "nodes" (named so in the one-line refusals)."""
        return "slurm" if self.slurm is not None else "nodes" if self.print_node_commands else "here"

    @property
    def here(self) -> bool:
        """False for plans run on other machines (`--slurm`, `--print-node-commands`): a login node's hardware says
        nothing about the cluster's, so the check runs without a machine profile."""
        return self.mode == "here"


@dataclass(frozen=True)
class _Target:
    """What the launcher starts: a user's script and its arguments, or the built-in trainer and its argv."""

    script: Path | None
    script_args: list[str]
    trainer_argv: list[str]

    @property
    def builtin(self) -> bool:
        return self.script is None


def run_for(request: RunRequest, console: Console) -> int:
    """Plan the run, then write, print or launch it, as the request asks; the exit status (a launch's is the first
    failing rank's)."""
    plan = plan_run(console, request)
    if request.slurm is not None:
        plan.write_sbatch(console, request.slurm, preflight=request.preflight)
        return 0
    if request.print_node_commands:
        for line in plan.node_commands(console, preflight=request.preflight):
            console.data(line)
        return 0
    if request.dry_run:
        console.data(plan.as_shell())
        return 0
    return plan.execute(console)


def plan_run(console: Console, request: RunRequest) -> RunPlan:
    """Check the config (refusing on errors unless forced), print the summary, and build the plan.

    A refusal is one line with a hint; the table of effective values follows a preflight that passed, or comes
    first with `explain`.
    """
    from accelwiz.launch.threads import launch_threads

    target = _target(request)
    checked = _checked(request, target)
    threads, node_threads = launch_threads(console, checked, here=request.here, given=request.threads_per_process)
    _show(console, request, checked, target, threads if request.here else node_threads, threads)
    return _plan(checked, target, threads, node_threads)


def _target(request: RunRequest) -> _Target:
    """The script and its arguments, or the built-in trainer's argv (checked by its own parser); refused in one
    line: a name no launch line can carry, trainer flags given to a script, a script that is not there."""
    from accelwiz.defaults import DEFAULT_CONFIG
    from accelwiz.launch.values import check_file_names

    script, script_args = request.script, list(request.script_args)
    check_file_names([request.config or DEFAULT_CONFIG, script])
    if script is not None and not script.is_file() and str(script).startswith("-"):
        # `run` passes options it does not know on as positional arguments (a script's own flags); with no script
        # before them they are the built-in trainer's (`accelwiz run -- --save-every 5`), or a typo
        script, script_args = None, [str(script), *script_args]
    if script is not None and request.trainer.given():
        raise UsageError(
            f"{', '.join(request.trainer.given())} belong to the built-in trainer, not to {script}",
            hint=f"pass your script's own flags after `--`: accelwiz run {shlex.quote(str(script))} -- --steps 100",
        )
    if script is not None and not script.is_file():
        raise InputError(f"training script `{script}` not found")
    trainer_argv = builtin_trainer_argv(request.trainer, script_args) if script is None else []
    return _Target(script, script_args, trainer_argv)


def _checked(request: RunRequest, target: _Target) -> Preflight:
    """The preflight of the run the trainer (or the script's Trainer arguments) will train, then what no launcher
    takes: a value no launcher accepts, or a DeepSpeed JSON the workers cannot open from where they start, is one
    line and exit 2, --force or not, before anything is shown."""
    from accelwiz.config.trainer_script import trainer_arguments_for_script
    from accelwiz.defaults import DEFAULT_CONFIG
    from accelwiz.launch.command import refuse_deepspeed_file_beside_yaml_only
    from accelwiz.launch.preflight import preflight
    from accelwiz.launch.run_workload import trainer_run
    from accelwiz.launch.values import check_launch_values
    from accelwiz.probe.profiles import load_system

    system = load_system("local") if request.here else None  # a launch here is checked against this machine
    config_path = request.config or DEFAULT_CONFIG
    run = trainer_run(config_path, target.trainer_argv) if target.builtin else None
    # a Trainer script's own arguments (`run train.py -- --bf16 ...`) are checked against the YAML and JSON too
    trainer_args = _built_in_trl_arguments(run) if target.script is None else \
        trainer_arguments_for_script(target.script, target.script_args)
    checked = preflight(config_path, system=system, builtin_trainer=target.builtin, here=request.here,
                        training_args=trainer_args, run=run)
    check_launch_values(checked.spec, checked.config_path)
    refuse_deepspeed_file_beside_yaml_only(checked.config_path, OPENED_FROM[request.mode])
    return checked


def _show(console: Console, request: RunRequest, checked: Preflight, target: _Target, shown: Threads | None,
          threads: Threads | None) -> None:
    """The findings (refused unless --force), the built-in trainer's inputs here (weights, --data, QLoRA: one line
    each, before the table), then the table of effective values; with --explain the table comes first, so that it
    stands before a refusal too."""
    from accelwiz.launch.preflight import render_summary

    if request.here:  # judged on this machine: say so where it is not the plan's
        from accelwiz.launch.machine_line import machine_line

        line = machine_line(checked.unit.plan, checked.unit.system)
        if line:
            console.warn(line)
    if request.explain:
        console.info(_for_terminal(render_summary(checked, threads)))
    _report_findings(console, checked, force=request.force)
    if target.builtin and request.here:
        from accelwiz.trainer.inputs import check_inputs
        from accelwiz.trainer.options import parse_args

        check_inputs(parse_args(["--config", str(checked.config_path), *target.trainer_argv]),
                     uses_deepspeed=checked.spec.uses_deepspeed)
    if not request.explain:
        console.info(_for_terminal(render_summary(checked, shown)))


def _plan(checked: Preflight, target: _Target, threads: Threads | None, node_threads: Threads | None) -> RunPlan:
    """The plan: what the launcher starts (the built-in trainer reads the plan and DeepSpeed JSON of the YAML it
    is launched with, trainer/settings.py), its environment, and the folder it writes."""
    from accelwiz.launch.environment import EnvChange
    from accelwiz.launch.run_workload import trainer_output_dir

    if target.builtin:
        argv = [str(TRAINER_SCRIPT), "--config", str(checked.config_path), *target.trainer_argv]
    else:
        argv = ["-m", CHILD_MODULE, str(target.script), *target.script_args]
    env = [*checked.env, *([EnvChange("OMP_NUM_THREADS", threads.word(), threads.reason)] if threads else [])]
    output_dir = trainer_output_dir(target.trainer_argv) if target.builtin else None
    return RunPlan(checked, argv, env, builtin_trainer=target.builtin, threads=threads, node_threads=node_threads,
                   output_dir=output_dir)


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
    from accelwiz.rules.diagnostic import Severity
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
        console.info(f"{suggestions} suggestion{plural}: see `accelwiz check {shlex.quote(str(checked.config_path))}`")
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
