"""`accelwiz check` as a function: a `CheckRequest` (the files, the flags, the Trainer's arguments) in, a `Checked`
(the check's result, or the exit code of `--diff`) out. The typer command parses the flags and renders; notes go
through `say` (stderr).

It lives beside the commands because it joins two domain packages (the rules and `check --fix`), as the env
report and the rule documentation do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelwiz.errors import UsageError

KINDS = ("sft", "dpo", "grpo")


@dataclass(frozen=True)
class CheckRequest:
    files: list[Path]
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    system: str | None = None
    model: str | None = None
    plan: Path | None = None
    workload_flags: dict[str, Any] = field(default_factory=dict)  # by check's names (cli/common.workload_flags)
    training_args: Path | None = None  # --training-args FILE
    trainer_argv: list[str] = field(default_factory=list)  # the arguments after `--`
    trl: bool = False
    kind: str | None = None
    launch_flags: dict[str, int | None] = field(default_factory=dict)  # num_processes, num_machines
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False


@dataclass
class Checked:
    result: Any = None  # rules.engine.CheckResult; None after --diff
    diff_exit: int | None = None
    hardware_rules: bool = False  # some selected rule module needs a machine


def check_files(request: CheckRequest, say: Callable[[str], None], console: Any = None) -> Checked:
    """Run the check (and `--fix`/`--diff` first). `console` is --fix's, which prints what it changed."""
    from accelwiz.rules.engine import check_with_plans
    from accelwiz.rules.registry import select_rules
    from accelwiz.rules.rule import Needs

    rules = select_rules(request.select, request.ignore)
    machine = _machine(request.system)
    spec = _model(request.model)  # each unit resolves its workload with it (the plan, the files, the flags)
    trainer, files = _trainer(request, say, console)
    facts = {"system": machine, "model": spec, "workload_flags": request.workload_flags, "training_args": trainer}
    if request.fix or request.diff:  # ruff's model: mend what is unambiguous, then report what remains
        from accelwiz.cli.fixes import run_fixes

        code = run_fixes(console, files, rules, unsafe=request.unsafe_fixes, diff=request.diff, **facts)
        if code is not None:
            return Checked(diff_exit=code)
    # the launch's counts join the files' before any rule runs (accelwiz/effective_flags.py)
    result = check_with_plans(files, rules, plan=request.plan, launch_flags=request.launch_flags, **facts)
    # the modules' declared inputs (the catalog), not each rule's `needs`: reading those would import every rule
    # module, the start-up cost the declaration saves
    return Checked(result, hardware_rules=any(Needs.SYSTEM in r.inputs for r in rules))


def _machine(system: str | None) -> Any:
    if system is None:
        return None
    from accelwiz.probe.profiles import load_system

    return load_system(system)


def _model(model: str | None) -> Any:
    if model is None:
        return None
    from accelwiz.modelspec.lookup import resolve_model

    return resolve_model(model)


def _trainer(request: CheckRequest, say: Callable[[str], None], console: Any) -> tuple[Any, list[Path]]:
    """The Trainer's (or TRL's) arguments and the files to check (a JSON `--deepspeed` names joins them). With
    --kind dpo|grpo the notes wait for TRL's own arguments (AW8xx), read beside the Trainer's."""
    from accelwiz.cli.trainer_args import trainer_inputs

    planned = _plan_of(request.files, request.plan)
    kind = request.kind or (planned.training.kind if planned is not None else "sft")
    if kind not in KINDS:
        raise UsageError(f"invalid --kind {kind}", hint="choose sft, dpo or grpo")
    argv = request.trainer_argv
    trainer, files = trainer_inputs(request.training_args, argv, request.files, console if kind == "sft" else None,
                                    trl=request.trl, num_processes=request.launch_flags.get("num_processes"))
    if kind == "sft":
        return trainer, files
    from accelwiz.config.trl_arguments import with_trl
    from accelwiz.resolution.planned_trl import planned_trl_arguments

    # a DPO/GRPO plan checked with no arguments: those the plan records, or the built-in trainer's
    built_in = planned_trl_arguments(planned) if planned is not None and request.kind is None \
        and request.training_args is None and not argv else None
    trainer = built_in or with_trl(trainer, kind, request.training_args, argv)
    if built_in is not None:
        whose = "the plan records" if planned.training.owner == "trainer" else "the built-in trainer hands TRL"
        say(f"note: the plan's {kind} run is checked with the arguments {whose}: "
            f"{' '.join([*built_in.given.values(), *built_in.trl_given.values()])}")
    for note in trainer.notes:
        say(f"note: Trainer arguments ({trainer.source}): {note}")
    return trainer, files


def _plan_of(files: list[Path], plan: Path | None) -> Any:
    """The plan (--plan, else the one beside the first YAML that has one), loaded; None without one, or when it
    does not load (the check itself reports why). Its kind of training decides which rules run: a DPO or GRPO plan
    is checked with TRL's, as `run` trains it."""
    from accelwiz.defaults import find_plan
    from accelwiz.errors import AccelwizError

    path = plan or next((found for found in map(find_plan, files) if found is not None), None)
    if path is None:
        return None
    from accelwiz.plan_file import load_plan

    try:
        return load_plan(path)
    except AccelwizError:
        return None
