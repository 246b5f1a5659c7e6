"""Check the rendered files with the real rule engine, then write them atomically, keeping a `.bak`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelwiz.atomic import atomic_write
from accelwiz.atomic_stage import write_all
from accelwiz.document.read import exists, read_bytes
from accelwiz.errors import UsageError


@dataclass(frozen=True)
class OutputFile:
    path: Path
    text: str


def check_rendered(
    accelerate: OutputFile,
    deepspeed: OutputFile | None,
    system: Any = None,
    *,
    plan: Any = None,
    model: Any = None,
    multi_node: bool = False,
    trainer_flags: Sequence[str] = (),
) -> list[Any]:
    """Every diagnostic the `check` rules report for the files, as if they were already on disk: through the
    engine's one entry (`check_unit`), with the machine for the hardware rules, the plan about to be written and
    its `model` (the memory rules resolve the workload from the plan, the files and the Trainer's arguments, as
    `accelwiz check` of the written files does) and, for several machines, the launch supplying each node's rank
    and the main address (node commands or SLURM pass them, as the plan's launcher says). In trainer mode the
    TrainingArguments flags the header prints are checked with the files, as `accelwiz check FILE -- FLAGS`."""
    from accelwiz.document import parse_text
    from accelwiz.rules.context import LaunchFacts
    from accelwiz.rules.engine import check_unit

    documents = [parse_text(accelerate.text, accelerate.path)]
    if deepspeed is not None:
        documents.append(parse_text(deepspeed.text, deepspeed.path, kind="deepspeed"))
    from accelwiz.launch.copyable import plain_launch_line

    # judged as launched: on CPUs the line init prints puts ACCELERATE_USE_CPU=true in front (AW117 is then handled)
    printed = plain_launch_line(documents[0].data or {}, accelerate.path, "SCRIPT", system=system)
    launch = LaunchFacts(supplies_rendezvous=multi_node, cpu_fallback="ACCELERATE_USE_CPU=true" in printed)
    training_args = None
    if trainer_flags:
        from accelwiz.config.training_args import parse_argv

        training_args = parse_argv(list(trainer_flags))
    return check_unit(documents, system=system, workload=_planned_workload(documents, plan, model, training_args),
                      launch=launch, training_args=training_args).diagnostics


def _planned_workload(documents: list[Any], plan: Any, model: Any, training_args: Any) -> Any:
    """The memory rules' workload: the plan about to be written, resolved with the files and the Trainer's
    arguments as `accelwiz check` resolves it (the plan is not handed to the rules: its files are not on disk yet,
    and the plan rules would look for them)."""
    if plan is None or model is None:
        return None
    from accelwiz.effective import resolve
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.workload import resolve_workload

    by_kind = {doc.kind: doc for doc in documents}
    effective = resolve(by_kind.get("accelerate"), by_kind.get("deepspeed"), plan)
    resolved = resolve_workload(plan=plan, effective=effective, trainer_args=training_args,
                                max_positions=model.max_position_embeddings)
    return to_workload(resolved, model)


def errors_of(diagnostics: Sequence[Any]) -> list[Any]:
    return [d for d in diagnostics if getattr(d.severity, "value", d.severity) == "error"]


def write_files(
    files: Sequence[OutputFile], *, force: bool, confirm_overwrite: Callable[[Path], bool] | None = None
) -> list[Path]:
    """Write every file or none: existing targets need --force or a yes, and are kept as `<name>.bak`.

    All permissions are settled before the first byte is written; each file is written to a temporary file
    in its own directory and moved into place with os.replace, so a reader never sees half a file.
    """
    existing = [f.path for f in files if exists(f.path)]
    for path in existing:
        if path.is_dir():
            raise UsageError(f"{path} is a directory", hint="pass a file name with -o/--output")
        if not force and not (confirm_overwrite and confirm_overwrite(path)):
            raise UsageError(
                f"{path} already exists; nothing was written",
                hint="pass --force to replace it (a .bak copy is kept), or choose -o/--output",
            )
    backups = []
    for path in existing:
        if path.is_symlink():
            continue  # with --force the link itself is replaced and what it names stays: nothing to back up
        # the .bak name is replaced, never written through (a link planted there keeps what it points to)
        backup = path.with_name(path.name + ".bak")
        atomic_write(backup, read_bytes(path, what="the file to replace"), follow_symlinks=False)
        backups.append(backup)
    # all files or none, even under Ctrl-C, SIGTERM or SIGKILL (atomic_stage.py); a link at a name is refused
    # unless --force, and then replaced, never written through
    write_all([(file.path, file.text) for file in files], force=force)
    return backups
