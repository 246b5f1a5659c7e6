"""`accelwiz migrate`: an FSDP1 Accelerate config rewritten for FSDP2, legacy keys mended, or (--to-accelerate) the
keys whose form changed between accelerate releases rewritten; comments and key order kept."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console

EPILOG = """\
Examples:

  $ accelwiz migrate fsdp.yaml              # in place, keeping fsdp.yaml.bak
  $ accelwiz migrate fsdp.yaml -o fsdp2.yaml
  $ accelwiz migrate fsdp.yaml --diff       # show the change; write nothing
  $ accelwiz migrate old.yaml --to-accelerate 1.15   # keys in today's forms
"""


def migrate(
    file: Annotated[Path, typer.Argument(help="The config to migrate: an Accelerate YAML, or a DeepSpeed JSON.",
                                         show_default=False)],
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="OUT", show_default=False,
                                                help="Write the result here (default: in place, with FILE.bak).")]
    = None,
    diff: Annotated[bool, typer.Option("--diff", help="Print the change as a unified diff; write nothing (exit 1 "
                                                      "when there is something to migrate).")] = False,
    to_accelerate: Annotated[str | None, typer.Option(
        "--to-accelerate", metavar="VERSION", show_default=False,
        help="Instead: rewrite the keys whose form changed between accelerate releases, for accelerate VERSION "
             "(top-level fp16 -> mixed_precision [0.6.0, PR #247]; dynamo_backend -> dynamo_config [0.17.0, "
             "PR #1150]; ipex_config removed [1.13.0, PR #3883]; a note, no edit, where an unset DeepSpeed "
             "gradient_clipping now clips at 1.0 [0.30.0, PR #2649]). A key whose new form VERSION cannot read "
             "yet is kept. See docs/migrate.md.")] = None,
    force: Annotated[bool, typer.Option("--force", help="With -o: replace a symbolic link at OUT (the link itself; "
                                                        "what it names stays untouched). Without it a link there "
                                                        "is refused.")] = False,
) -> None:
    """Migrate a config: FSDP1 -> FSDP2 (what `accelerate to-fsdp2` does, without leaking FSDP1 keys), and legacy or
    removed keys that have a successor (a DeepSpeed JSON too); or, with --to-accelerate VERSION, the Accelerate keys
    whose form changed between accelerate releases."""
    console = get_console()
    with exit_on_error(console):
        import difflib

        from accelwiz.atomic import atomic_write, locked, read_for_update, resolve_target, restore_layout, update
        from accelwiz.console import printable
        from accelwiz.document.load import document_from_text
        from accelwiz.errors import InputError
        from accelwiz.fix.edits import EditError
        from accelwiz.migrate.fsdp2 import migrate_text
        from accelwiz.migrate.legacy import migrate_legacy_keys

        if output is not None and not diff and not (output.parent if str(output.parent) else Path(".")).is_dir():
            from accelwiz.errors import UsageError

            # like `run --slurm`: a mistyped -o folder is an error, not a folder to create
            raise UsageError(f"cannot write {output}: the folder {output.parent} does not exist",
                             hint=f"create it first (mkdir -p {output.parent}), or pass -o in an existing folder")
        from accelwiz.document.read import exists

        if not exists(file):
            raise InputError(f"{file}: no such file", hint="check the path")
        # The whole read-modify-write holds the file's lock: a `check --fix` of the same file waits, then reads
        # what this command wrote (atomic.py).
        with locked([resolve_target(file)]):
            snapshot = read_for_update(file)
            text = snapshot.text
            document = document_from_text(snapshot.original, file)
            try:
                if to_accelerate is not None:
                    from accelwiz.errors import UsageError
                    from accelwiz.migrate.accelerate_releases import migrate_to_accelerate, parse_version

                    target = parse_version(to_accelerate)
                    if document.kind != "accelerate":
                        raise UsageError(f"--to-accelerate rewrites an Accelerate YAML; {file} is not one",
                                         hint="pass the Accelerate YAML, or leave --to-accelerate out")
                    migrated, notes = migrate_to_accelerate(text, target)
                else:
                    migrated, migration = migrate_text(text, document.syntax)
                    migrated, legacy = migrate_legacy_keys(migrated, file.name)
                    notes = ([] if document.kind != "accelerate" else migration.notes) + legacy
            except EditError as exc:
                raise InputError(f"cannot edit {file} in place: {exc}",
                                 hint="rewrite the file with plain two-space indentation, then migrate again") from None
            for note in notes:
                console.info(f"note: {note}")
            if migrated == text:
                console.info(f"{file}: nothing to migrate")
                raise typer.Exit(0)
            if diff:
                lines = difflib.unified_diff(text.splitlines(True), migrated.splitlines(True),
                                             fromfile=f"{file} (before)", tofile=f"{file} (migrated)")
                console.data(printable("".join(lines).rstrip(), keep="\n\t"))
                raise typer.Exit(1)
            target = output or file
            if output is None:
                # the original bytes, CRLF and all; the .bak name is replaced, never written through
                atomic_write(file.with_name(file.name + ".bak"), snapshot.raw, follow_symlinks=False)
                update(snapshot, migrated)
            else:
                atomic_write(target, restore_layout(snapshot, migrated), create_parents=False, new_output=True,
                             force=force)
        console.info(f"wrote {target}" + ("" if output else f" (the original is {file.name}.bak)"))
        from accelwiz.rules.engine import check_paths
        from accelwiz.rules.registry import select_rules
        from accelwiz.rules.report import render_text, summary

        result = check_paths([target], select_rules())
        if result.diagnostics:
            console.data(render_text(result.diagnostics, color=console.color))
        console.info(summary(result.diagnostics, unreadable=len(result.input_errors)))
    raise typer.Exit(result.exit_code())
