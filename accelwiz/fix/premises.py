"""A fix never acts on a premise another finding on the same file calls wrong.

A fix's premises (`Fix.premises`) are the settings it takes as read: "delete `zero3_init_flag`, which only ZeRO-3
reads" takes the ZeRO stage as written. When the stage key is misspelled (`zero_stgae: 3`, AW001: did you mean
`zero_stage`?) the stage the fix reads is the default, not what the user meant, and deleting the flag would
make a wrong file worse. So a fix whose premise another error or warning on the same file names (the key itself,
a value inside it, or an unknown key that is a near miss of it) is not applied, and the note says which finding.
An info about the section holding the premise (AW228 on `deepspeed_config`) says nothing against it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.document import KeyPath
    from accelwiz.fix.table import Fix
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic


def doubted_premise(context: CheckContext, diagnostics: list[Diagnostic], diagnostic: Diagnostic,
                    fix: Fix) -> str | None:
    """Why `fix` cannot act on `diagnostic`: the first other finding on the same file that calls one of its
    premises wrong, said in one line; None when none does."""
    if not fix.premises:
        return None
    from accelwiz.rules.diagnostic import Severity

    for other in diagnostics:
        if other is diagnostic or other.file != diagnostic.file or other.code == diagnostic.code or \
                other.severity is Severity.INFO:
            continue
        for premise in fix.premises:
            if _names(context, other, premise):
                return (f"it relies on `{'.'.join(map(str, premise))}`, which {other.code} on the same file calls "
                        f"wrong ({other.message}); fix that first")
    return None


def _names(context: CheckContext, finding: Diagnostic, premise: KeyPath) -> bool:
    path = tuple(finding.path)
    if premise == path[: len(premise)]:
        return True  # the premise itself, or a value inside it
    return any(premise == (*issue.path[:-1], issue.resembles)
               for issues in context.schema.values() for issue in issues
               if issue.resembles is not None and tuple(issue.path) == path)
