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
                                                help="Write the result here (default: in place, with FILE.bak), and the plan beside "
                                                     "FILE beside it (new.yaml: new.plan.yaml), as convert does.")]
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
    force: Annotated[bool, typer.Option("--force", help="With -o: replace a symbolic link at OUT or at its plan (the "
                                                        "link itself; what it names stays untouched). Without it a "
                                                        "link there is refused.")] = False,
) -> None:
    """Migrate a config: FSDP1 -> FSDP2 (what `accelerate to-fsdp2` does, without leaking FSDP1 keys), and legacy or
    removed keys that have a successor (a DeepSpeed JSON too); or, with --to-accelerate VERSION, the Accelerate keys
    whose form changed between accelerate releases."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.console import printable
        from accelwiz.migrate.request import MigrateRequest, migrate_file

        done = migrate_file(MigrateRequest(file, output, diff, to_accelerate, force))
        for note in done.notes:
            console.info(f"note: {note}")
        if not done.changed:
            console.info(f"{file}: nothing to migrate")
            raise typer.Exit(0)
        if done.diff is not None:
            console.data(printable(done.diff, keep="\n\t"))
            raise typer.Exit(1)
        console.info(f"wrote {done.written}" + ("" if output else f" (the original is {file.name}.bak)"))
        from accelwiz.rules.report import render_text, summary

        if done.check.diagnostics:
            console.data(render_text(done.check.diagnostics, color=console.color))
        console.info(summary(done.check.diagnostics, unreadable=len(done.check.input_errors)))
    raise typer.Exit(done.check.exit_code())
