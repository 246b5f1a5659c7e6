"""What `check` says of the files init renders, and, on a terminal, the review screen before they are written:
write, apply a fallback that fits, edit one answer, or cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from accelwiz.console import Console
from accelwiz.errors import EXIT_FINDINGS, AccelwizError

if TYPE_CHECKING:
    from accelwiz.wizard.generate import Generated


class ChecksFailed(AccelwizError):
    """The rendered configs did not pass `check`; nothing was written."""

    exit_code = EXIT_FINDINGS


def review(result: Any, generated: Generated, fallbacks: list[Any], console: Console, *, runs: bool,
           select: Callable[[str, list[tuple[str, Any]]], Any]) -> tuple[str, Any]:
    """The review screen: every answer as the files spell it, the estimate, what check says; then write, apply a
    fallback that fits, edit one answer, or cancel (KeyboardInterrupt: nothing is written, exit 130). `select`
    shows a menu of (label, value) and returns the value chosen."""
    from accelwiz.rules.report import render_text
    from accelwiz.wizard.prompters import spelled
    from accelwiz.wizard.write import errors_of

    width = max(len(key) for key in result.answers)
    lines = ["", "Review the plan:"]
    lines += [f"  {key:<{width}}  {spelled(value) if value != '' else 'none'}" for key, value in result.answers.items()]
    lines.append(f"  {'estimate':<{width}}  {generated.estimate}")
    console.info("\n".join(lines))
    if worth_showing(generated.diagnostics):
        console.info(render_text(worth_showing(generated.diagnostics)).rstrip("\n"))
    errors = errors_of(generated.diagnostics)
    choices: list[tuple[str, Any]] = []
    if runs and not errors:
        choices.append(("Write the files", ("write", None)))
    for fallback in fallbacks:
        choices.append((f"Apply {fallback.title}: {fallback.reason}", ("apply", fallback)))
    choices.append(("Edit one answer", ("edit", None)))
    choices.append(("Cancel (write nothing)", ("cancel", None)))
    title = "Write these files?" if runs and not errors else "This plan does not pass: what now?"
    action, detail = select(title, choices)
    if action == "cancel":
        raise KeyboardInterrupt
    if action == "edit":
        keys = [(f"{key}: {spelled(value)}", key) for key, value in result.answers.items()]
        detail = select("Which answer? (type to filter)", keys)
    return action, detail


def select_menu(title: str, choices: list[tuple[str, Any]]) -> Any:
    """A questionary menu; typing filters it (so "micro" finds micro_batch)."""
    import questionary

    items = [questionary.Choice(label, value=value) for label, value in choices]
    prompt = questionary.select(title, choices=items, use_search_filter=True, use_jk_keys=False)
    try:
        return prompt.unsafe_ask()
    except EOFError:
        raise KeyboardInterrupt from None


def worth_showing(diagnostics: list[Any]) -> list[Any]:
    """What `check` says of the files init has just written, less its infos: they are suggestions about
    choices init made on purpose (a DeepSpeed JSON that fixes accumulation and precision so the YAML and the JSON
    agree: AW215, AW403), which `accelwiz check` still shows on request."""
    from accelwiz.rules.diagnostic import Severity

    return [d for d in diagnostics if d.severity is not Severity.INFO]


def report_diagnostics(diagnostics: list[Any], console: Console) -> None:
    """Show what `check` says about the rendered files; errors stop the write."""
    from accelwiz.rules.report import render_text
    from accelwiz.wizard.write import errors_of

    if worth_showing(diagnostics):
        console.info(render_text(worth_showing(diagnostics)).rstrip("\n"))
    errors = errors_of(diagnostics)
    if errors:
        raise ChecksFailed(
            f"the generated configs have {len(errors)} error(s) (shown above); nothing was written",
            hint="change the answers named in the errors and run `accelwiz init` again",
        )
