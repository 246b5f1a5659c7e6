"""`accelwiz migrate` as a function: a `MigrateRequest` in, a `Migrated` (the notes, the diff or the file written,
and the check of what was written) out. The typer command parses and renders.

The whole read-modify-write holds the file's lock: a `check --fix` of the same file waits, then reads what this
wrote (accelwiz/atomic.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError


@dataclass(frozen=True)
class MigrateRequest:
    file: Path
    output: Path | None = None  # None: in place, the original kept as FILE.bak
    diff: bool = False
    to_accelerate: str | None = None  # --to-accelerate VERSION instead of FSDP2 + legacy keys
    force: bool = False


@dataclass
class Migrated:
    notes: list[str] = field(default_factory=list)
    changed: bool = False
    diff: str | None = None  # with --diff: the unified diff (nothing written)
    written: Path | None = None
    check: Any = None  # rules.engine.CheckResult of the written file


def migrate_file(request: MigrateRequest) -> Migrated:
    from accelwiz.atomic import atomic_write, locked, resolve_target
    from accelwiz.atomic_update import read_for_update, restore_layout, update

    _require_paths(request)
    file, output = request.file, request.output
    with locked([resolve_target(file)]):
        snapshot = read_for_update(file)
        migrated, notes = _migrated_text(request, snapshot)
        if migrated == snapshot.text:
            return Migrated(notes)
        if request.diff:
            import difflib

            lines = difflib.unified_diff(snapshot.text.splitlines(True), migrated.splitlines(True),
                                         fromfile=f"{file} (before)", tofile=f"{file} (migrated)")
            return Migrated(notes, True, diff="".join(lines).rstrip())
        if output is None:
            # the original bytes, CRLF and all; the .bak name is replaced, never written through
            atomic_write(file.with_name(file.name + ".bak"), snapshot.raw, follow_symlinks=False)
            update(snapshot, migrated)
        else:
            carried = _carried(request, migrated)
            migrated = _header_for(migrated, request, carried)
            _write_output(request, restore_layout(snapshot, migrated), carried)
            if carried is not None:
                notes.append(f"the plan beside {file} ({carried.source.path}) carried to {carried.path}: "
                             f"`accelwiz run --config {output}` trains what {file}'s plan says")
    written = output or file
    from accelwiz.rules.engine import check_with_plans
    from accelwiz.rules.registry import select_rules

    # as `accelwiz check WRITTEN` judges it: with the plan beside it
    return Migrated(notes, True, written=written, check=check_with_plans([written], select_rules()))


@dataclass(frozen=True)
class _Carried:
    source: Any  # the PlanFile beside the input
    path: Path  # where the output's plan goes
    plan: Any  # that PlanFile
    text: str


def _carried(request: MigrateRequest, migrated: str) -> _Carried | None:
    """The plan beside the input, carried to the output's name (accelwiz/convert/carried_plan.py, as `convert`
    carries it): without it `run --config OUT` has no model and trains other defaults than the input's plan."""
    from accelwiz.convert.carried_plan import carried_plan_text, source_plan
    from accelwiz.launch import shell

    assert request.output is not None
    source = source_plan(request.file)
    if source is None:
        return None
    path, plan, text = carried_plan_text(source, yaml_path=request.output, yaml_text=migrated,
                                         command=shell.join(_command(request)))
    return _Carried(source, path, plan, text)


def _write_output(request: MigrateRequest, text: str, carried: _Carried | None) -> None:
    """The output, and its carried plan first, all or none (a YAML whose plan could not be written would run other
    defaults); a link at either name is refused unless --force, then replaced, never followed."""
    assert request.output is not None
    if carried is None:
        from accelwiz.atomic import atomic_write

        atomic_write(request.output, text, create_parents=False, new_output=True, force=request.force)
        return
    from accelwiz.atomic_stage import write_all

    write_all([(carried.path, carried.text), (request.output, text)], create_parents=False, force=request.force)


def _command(request: MigrateRequest) -> list[str]:
    """What wrote the output: the header's and the carried plan's `created_by`."""
    argv = ["accelwiz", "migrate", str(request.file), "-o", str(request.output)]
    if request.to_accelerate is not None:
        argv += ["--to-accelerate", request.to_accelerate]
    return argv


def _header_for(migrated: str, request: MigrateRequest, carried: _Carried | None) -> str:
    """A new file (-o) gets a header naming this command and launch lines for it (the carried plan's launcher),
    where the source's accelwiz header would name the source (issue 31: a copied launch line must run the written
    file). In place, the header stays: its file name is still right."""
    from accelwiz.convert.header import converted_header, has_header

    if request.output is None or not has_header(migrated):
        return migrated
    import yaml

    from accelwiz.launch import shell

    try:
        accelerate = yaml.safe_load(migrated)
    except yaml.YAMLError:  # not YAML (a DeepSpeed JSON never starts with the header): keep the text as migrated
        return migrated
    system = None
    if carried is not None:
        from accelwiz.plan_file import plan_system

        system = plan_system(carried.source)
    plans = (carried.source, carried.plan) if carried is not None else (None, None)
    return converted_header(migrated, command=shell.join(_command(request)), source=request.file,
                            out=request.output, to=None, plans=plans,
                            accelerate=accelerate if isinstance(accelerate, dict) else {}, system=system)


def _require_paths(request: MigrateRequest) -> None:
    output = request.output
    if output is not None and not request.diff and not (output.parent if str(output.parent) else Path(".")).is_dir():
        # like `run --slurm`: a mistyped -o folder is an error, not a folder to create
        from accelwiz.launch.shell import quote  # the hint's command is pasted into a shell: a folder with a space

        raise UsageError(f"cannot write {output}: the folder {output.parent} does not exist",
                         hint=f"create it first (mkdir -p {quote(str(output.parent))}), or pass -o in an existing "
                              "folder")
    from accelwiz.document.read import exists

    if not exists(request.file):
        raise InputError(f"{request.file}: no such file", hint="check the path")


def _migrated_text(request: MigrateRequest, snapshot: Any) -> tuple[str, list[str]]:
    """The migrated text and the notes: --to-accelerate's release rewrites, else FSDP1 -> FSDP2 and legacy keys."""
    from accelwiz.document.load import document_from_text
    from accelwiz.fix.edits import EditError

    file, text = request.file, snapshot.text
    document = document_from_text(snapshot.original, file)
    try:
        if request.to_accelerate is not None:
            from accelwiz.migrate.accelerate_releases import migrate_to_accelerate, parse_version

            target = parse_version(request.to_accelerate)
            if document.kind != "accelerate":
                raise UsageError(f"--to-accelerate rewrites an Accelerate YAML; {file} is not one",
                                 hint="pass the Accelerate YAML, or leave --to-accelerate out")
            return migrate_to_accelerate(text, target)
        from accelwiz.migrate.fsdp2 import migrate_text
        from accelwiz.migrate.legacy import migrate_legacy_keys

        migrated, migration = migrate_text(text, document.syntax)
        migrated, legacy = migrate_legacy_keys(migrated, file.name)
        return migrated, ([] if document.kind != "accelerate" else migration.notes) + legacy
    except EditError as exc:
        raise InputError(f"cannot edit {file} in place: {exc}",
                         hint="rewrite the file with plain two-space indentation, then migrate again") from None
