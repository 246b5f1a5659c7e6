"""Group the files given on the command line into units and run the selected rules on each."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelwiz.document import Document, load_document
from accelwiz.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, InputError
from accelwiz.rules.context import CheckContext, DeepSpeedReference
from accelwiz.rules.diagnostic import Diagnostic, Severity
from accelwiz.rules.registry import Rule


@dataclass
class CheckResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    units: list[CheckContext] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def exit_code(self, *, strict: bool = False) -> int:
        if self.input_errors:
            return EXIT_USAGE
        failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return EXIT_FINDINGS if any(d.severity in failing for d in self.diagnostics) else EXIT_OK


def resolve_deepspeed_file(written: str, yaml_path: Path) -> DeepSpeedReference:
    """Resolve `deepspeed_config_file` as the worker processes do: relative to the working directory, and with
    no `~` expansion (accelerate opens the string as written; AW202 explains a `~`)."""
    candidate = Path(written)
    if candidate.is_file():
        return DeepSpeedReference(written, candidate)
    if not candidate.is_absolute():
        beside_yaml = yaml_path.parent / candidate
        if beside_yaml.is_file():
            return DeepSpeedReference(written, beside_yaml, relative_to_yaml_only=True)
    return DeepSpeedReference(written, None)


def build_units(paths: Sequence[Path], result: CheckResult, **context: Any) -> list[CheckContext]:
    """Load files and group them: a YAML with the JSON it names (or the one JSON given beside it), else alone."""
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
        unit = CheckContext(accelerate=yaml_doc, **context)
        written = yaml_doc.get("deepspeed_config", "deepspeed_config_file")
        if isinstance(written, str) and written.strip() and written.strip().lower() != "none":
            unit.deepspeed_reference = resolve_deepspeed_file(written.strip(), yaml_doc.path)
            resolved = unit.deepspeed_reference.resolved
            if resolved is not None:
                given = next((j for j in jsons if _same(j.path, resolved)), None)
                try:
                    unit.deepspeed = given or load_document(resolved, kind="deepspeed")
                except InputError as exc:
                    result.input_errors.append(exc)
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
    units.extend(CheckContext(deepspeed=j, **context) for j in jsons if j.path not in used_json)
    return units


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def run_rules(unit: CheckContext, rules: Iterable[Rule]) -> list[Diagnostic]:
    diagnostics = []
    for rule in rules:
        if rule.needs == "system" and unit.system is None:
            continue
        if rule.needs == "workload" and unit.workload is None:
            continue
        for finding in rule.check(unit):
            document = unit.document(finding.role) or (unit.documents[0] if unit.documents else None)
            span = document.span(finding.path) if document else None
            diagnostics.append(Diagnostic(
                code=rule.code, name=rule.name, severity=rule.severity, message=finding.message,
                file=document.name if document else "<none>", line=span.line if span else 1,
                column=span.column if span else 1, path=finding.path, fix=finding.fix or rule.fix,
            ))
    return diagnostics


def check_paths(paths: Sequence[Path], rules: Sequence[Rule], **context: Any) -> CheckResult:
    result = CheckResult()
    result.units = build_units(paths, result, **context)
    for unit in result.units:
        result.diagnostics.extend(run_rules(unit, rules))
    result.diagnostics.sort(key=lambda d: (d.file, d.line, d.column, d.code))
    return result
