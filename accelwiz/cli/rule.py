"""`accelwiz rule`: a rule's documentation, or the list of all rules."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console
from accelwiz.errors import UsageError


EPILOG = """\
Examples:

  $ accelwiz rule AW201               # what it checks, why, example, fix
  $ accelwiz rule param-offload-below-zero3   # by name
  $ accelwiz rule --all               # every rule: code, severity, fix, name
  $ accelwiz rule --all --format markdown > docs/rules.md
"""


class RuleFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def rule(
    code: Annotated[str | None, typer.Argument(help="A rule code (AW201) or name (param-offload-below-zero3).",
                                               show_default=False)] = None,
    show_all: Annotated[bool, typer.Option("--all", help="List every rule.")] = False,
    output_format: Annotated[RuleFormat, typer.Option("--format", "-f")] = RuleFormat.text,
) -> None:
    """Explain a rule: what it checks, why it matters, and how to fix it."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.cli.rule_docs import render_rule, render_rules_json, render_rules_markdown, render_rules_table
        from accelwiz.rules.registry import load_all_rules

        rules = load_all_rules()
        if show_all or code is None:
            if output_format is RuleFormat.json:
                console.data(render_rules_json(rules.values()))
            elif output_format is RuleFormat.markdown:
                console.data(render_rules_markdown(rules.values()))
            else:
                console.data(render_rules_table(rules.values()))
            return
        wanted = code.strip()
        match = rules.get(wanted.upper()) or next((r for r in rules.values() if r.name == wanted.lower()), None)
        if match is None:
            raise UsageError(f"no rule {code!r}", hint="list the rules with `accelwiz rule --all`")
        console.data(json.dumps(render_rules_json([match], as_list=False), indent=2)
                     if output_format is RuleFormat.json else render_rule(match))
