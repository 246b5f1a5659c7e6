"""The one way into the rule engine: `check_unit` runs the rules on one unit (an Accelerate YAML and the
DeepSpeed JSON it uses), and `check_paths` groups the files given on the command line into units and calls it.

Every command goes through `check_unit`: `check` and `env` (by `check_with_plans`, which adds the plan file beside
each YAML), `init` (the rendered files) and `run`'s preflight.
What the launcher changes reaches the rules as `LaunchFacts`; findings a rule marks as handled by the launch
come back apart (`UnitResult.handled`), never counted as errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.document import Document, load_document
from accelwiz.deepspeed_file import load_named_deepspeed, resolve_deepspeed_file
from accelwiz.effective import named_deepspeed_file
from accelwiz.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, InputError
from accelwiz.rules.context import CheckContext, DeepSpeedReference, LaunchFacts
from accelwiz.rules.diagnostic import Diagnostic, Severity
from accelwiz.rules.rule import Rule, inputs_of
from accelwiz.rules.unit_workload import unit_workload

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.plan_file import PlanFile
    from accelwiz.probe.model import MachineProfile


@dataclass
class UnitResult:
    """One unit's verdict: the context the rules saw (for --explain), their diagnostics, and the findings the
    launch as planned makes moot (each `Diagnostic.handled` says why)."""

    context: CheckContext
    diagnostics: list[Diagnostic]
    handled: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]


@dataclass
class CheckResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    units: list[CheckContext] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    handled: list[Diagnostic] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a line to `skipped` once (each plan's note, each unit's)."""
        if text not in self.skipped:
            self.skipped.append(text)

    def exit_code(self, *, strict: bool = False) -> int:
        if self.input_errors:
            return EXIT_USAGE
        failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return EXIT_FINDINGS if any(d.severity in failing for d in self.diagnostics) else EXIT_OK


def check_unit(
    documents: Sequence[Document],
    *,
    system: MachineProfile | None = None,
    workload: Any = None,
    launch: LaunchFacts | None = None,
    plan: PlanFile | None = None,
    deepspeed_reference: DeepSpeedReference | None = None,
    rules: Iterable[Rule] | None = None,
    training_args: Any = None,
    workload_flags: dict[str, Any] | None = None,
    model: ModelSpec | None = None,
    launch_flags: dict[str, int] | None = None,
) -> UnitResult:
    """Run the rules (all of them unless `rules` is given) on one unit.

    `documents` holds at most one Accelerate YAML and one DeepSpeed JSON, told apart by `Document.kind`. The
    JSON is taken as the file the YAML names; pass `deepspeed_reference` when it was resolved otherwise (check's
    file grouping does). `workload` (accelwiz.estimate.workload.Workload) turns on the memory rules, `system`
    the hardware rules; `launch` says what the launcher changes; `plan` is the plan file init wrote. `model` (with
    no `workload`) resolves the unit's workload once, from the plan, the files, the Trainer's arguments and
    `workload_flags` (accelwiz.resolution.workload): what the memory rules judge is what will run. `launch_flags`
    (check's --num-processes / --num-machines) join the YAML's counts before any rule runs, and win over them.
    """
    context = CheckContext(system=system, workload=workload, launch=launch or LaunchFacts(), plan=plan,
                           training_args=training_args,  # TrainerArguments: the AW7xx rules
                           workload_flags=dict(workload_flags or {}),  # what --seq-len ... replaced (--explain)
                           launch_flags={k: v for k, v in (launch_flags or {}).items() if v is not None})
    for document in documents:
        role = "accelerate" if document.kind == "accelerate" else "deepspeed"
        if getattr(context, role) is not None:
            raise ValueError(f"a unit has one {role} document; got two ({document.name})")
        setattr(context, role, document)
    if deepspeed_reference is None and context.accelerate is not None and context.deepspeed is not None:
        written = named_deepspeed_file(context.accelerate)
        if written is not None:
            deepspeed_reference = DeepSpeedReference(written, context.deepspeed.path)
    context.deepspeed_reference = deepspeed_reference
    if workload is not None:  # resolved by the caller from the same files (init's write check, run's preflight)
        context.workload = workload
    elif model is not None:
        context.workload = unit_workload(context, model)
    if rules is None:
        from accelwiz.rules.registry import select_rules

        rules = select_rules()
    result = UnitResult(context, [])
    for diagnostic in run_rules(context, rules):
        (result.handled if diagnostic.handled else result.diagnostics).append(diagnostic)
    return result


def build_units(paths: Sequence[Path], result: CheckResult) -> list[CheckContext]:
    """Load files and group them: a YAML with the JSON it names (or the one JSON given beside it), else alone.
    The contexts hold the documents only: `check_unit` builds the one the rules see."""
    documents: list[Document] = []
    for path in paths:
        try:
            documents.append(load_document(path))
        except InputError as exc:
            result.input_errors.append(exc)
    yamls = [d for d in documents if d.kind == "accelerate"]
    jsons = [d for d in documents if d.kind == "deepspeed"]
    used_json: set[Path] = set()
    units = []
    for yaml_doc in yamls:
        unit = CheckContext(accelerate=yaml_doc)
        written = named_deepspeed_file(yaml_doc)
        if written is not None:
            unit.deepspeed_reference = resolve_deepspeed_file(written, yaml_doc.path)
            resolved = unit.deepspeed_reference.resolved
            if resolved is not None:
                given = next((j for j in jsons if _same(j.path, resolved)), None)
                try:
                    unit.deepspeed = given or load_named_deepspeed(resolved)
                except InputError as exc:
                    result.input_errors.append(exc)
                if given is None and not _inside(resolved, yaml_doc.path.parent):
                    result.skipped.append(f"{yaml_doc.path}: deepspeed_config_file names {resolved}, outside the "
                                          "config's folder")
                used_json.update({given.path} if given else set())
            elif len(yamls) == 1 and len(jsons) == 1:
                # The named file is missing (reported by its own rule), but the user handed us the JSON they mean:
                # check the pair anyway, so disagreements between the two files are not hidden behind that error.
                unit.deepspeed = jsons[0]
                used_json.add(jsons[0].path)
        elif len(yamls) == 1 and len(jsons) == 1:
            unit.deepspeed = jsons[0]
            used_json.add(jsons[0].path)
        units.append(unit)
    units.extend(CheckContext(deepspeed=j) for j in jsons if j.path not in used_json)
    return units


def _inside(path: Path, folder: Path) -> bool:
    """`path` (symlinks and `..` resolved) lies under `folder`."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def run_rules(unit: CheckContext, rules: Iterable[Rule]) -> list[Diagnostic]:
    """Every finding of `rules` on the unit, handled ones included: the inner loop of `check_unit`."""
    diagnostics = []
    available = inputs_of(unit)  # a rule whose module needs more is skipped before its module is imported
    for rule in rules:
        if not rule.runs_on(available):
            continue
        for finding in rule.check(unit):
            document = unit.document(finding.role) or (unit.documents[0] if unit.documents else None)
            span = document.span(finding.path) if document else None
            diagnostics.append(Diagnostic(
                code=rule.code, name=rule.name, severity=rule.severity, message=finding.message,
                file=document.name if document else "<none>", line=span.line if span else 1,
                column=span.column if span else 1, path=finding.path, fix=finding.fix or rule.fix,
                handled=finding.handled,
            ))
    return diagnostics


def check_paths(paths: Sequence[Path], rules: Sequence[Rule] | None = None, **facts: Any) -> CheckResult:
    """Load the files, group them into units, and `check_unit` each (`facts`: check_unit's keyword arguments:
    system, workload, launch, plan)."""
    result = CheckResult()
    for unit in build_units(paths, result):
        _check_into(result, unit, rules, facts)
    result.diagnostics.sort(key=lambda d: (d.file, d.line, d.column, d.code))
    return result


def check_with_plans(files: Sequence[Path], rules: Sequence[Rule] | None = None, *,
                     system: MachineProfile | None = None, model: ModelSpec | None = None, plan: Path | None = None,
                     training_args: Any = None, workload_flags: dict[str, Any] | None = None,
                     launch_flags: dict[str, int] | None = None) -> CheckResult:
    """`accelwiz check` with plans: each YAML with the plan beside it (or `plan`, given with --plan), and the
    memory and hardware rules run with the plan's system and workload.

    `model` (--model) replaces the plan's model; `workload_flags` (check's --micro-batch, --seq-len,
    --gradient-checkpointing, --lora/--qlora, --attention: Workload field -> value) replace the plan's workload
    field by field: each unit's workload is resolved once, from the plan, the files, the Trainer's arguments and
    the flags (`check_unit`). Flags without --model or a plan are a UsageError. With no Trainer arguments given,
    a plan whose batch the Trainer owns gives its recorded `training.trainer_arguments`, so the files are checked
    as they will run.

    The files are grouped into units as `check_paths` groups them (a YAML with the JSON it names, or the one JSON
    given beside it), then each unit is checked with the plan of its YAML. Why a plan's workload could not be
    estimated, and which workload fields came from where, is in `skipped`.
    """
    from accelwiz.defaults import find_plan
    from accelwiz.rules.unit_plan import add_plan_facts, load_once, refuse_flags_without_model

    flags = dict(workload_flags or {})
    result = CheckResult()
    plans: dict[Path, Any] = {}  # each plan file loaded once, its error reported once
    for unit in build_units(files, result):
        facts: dict[str, Any] = {"system": system, "model": model, "training_args": training_args,
                                 "workload_flags": flags, "launch_flags": launch_flags}
        plan_path = plan if plan is not None else find_plan(unit.accelerate.path) if unit.accelerate else None
        if plan_path is None and model is None and flags:
            refuse_flags_without_model(flags, unit.documents[0].name if unit.documents else "the files")
        if plan_path is not None:
            loaded = load_once(plans, plan_path, result)
            if loaded is None:
                continue
            add_plan_facts(facts, loaded, plan_path, result)
        _check_into(result, unit, rules, facts)
        for text in result.units[-1].notes:
            result.note(text)
    result.diagnostics.sort(key=lambda d: (d.file, d.line, d.column, d.code))
    return result


def _check_into(result: CheckResult, unit: CheckContext, rules: Sequence[Rule] | None, facts: dict[str, Any]) -> None:
    """Check one grouped unit through `check_unit` and gather what it found into `result`."""
    checked = check_unit(unit.documents, deepspeed_reference=unit.deepspeed_reference, rules=rules, **facts)
    result.units.append(checked.context)
    result.diagnostics.extend(checked.diagnostics)
    result.handled.extend(checked.handled)
