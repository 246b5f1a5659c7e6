"""The fix table: rule code -> the function that mends one of its findings, and whether the mend is safe.

safe: the file then says what it evidently meant, and the run does what it already did or what the file plainly
asked for (a quoted number unquoted, a YAML 1.1 boolean quoted, a key that is ignored removed, a legacy key
renamed to its successor, a default written out). unsafe: the run changes (a typo'd key starts to apply, a
removed feature is dropped, a value is replaced with the one the other file or the Trainer gives): `--fix` applies
these only with `--unsafe-fixes`.

A fix function (a mend, accelwiz/fix/mends.py) receives the unit's CheckContext and the Diagnostic, and returns the
edits per file role, or None when this finding has no unambiguous mend (the rule stays fixable in general; this case
is reported as not fixed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from accelwiz.fix.mends import (
    RoleEdits,
    batch_identity,
    delete_dropped_auto,
    delete_key,
    delete_param_offload,
    duplicate_json_key,
    explicit_gradient_clipping,
    gradient_accumulation_auto,
    integral_float,
    json_gradient_accumulation,
    legacy_key,
    optimizer_max_grad_norm,
    precision_declared_once,
    quote_yaml_word,
    removed_key,
    rename_to_suggestion,
    stage3_init_flag,
    trainer_auto,
    unquote_number,
    unused_zero3_auto,
)

if TYPE_CHECKING:
    from accelwiz.document import KeyPath
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic

Applicability = Literal["safe", "unsafe"]
FixFunction = Callable[["CheckContext", "Diagnostic"], RoleEdits | None]


@dataclass(frozen=True)
class Fix:
    function: FixFunction
    applicability: Applicability
    summary: str  # what the fix does, for `accelwiz rule CODE` and docs/rules.md
    # The settings the fix takes as read (the ZeRO stage for "delete what only ZeRO-3 reads"): while another
    # finding on the same file calls one of them wrong (a misspelled `zero_stgae`), the fix is not applied.
    premises: tuple[KeyPath, ...] = ()


# where each setting a fix may rely on is written (the YAML's inline deepspeed_config, the JSON)
_STAGE = (("deepspeed_config", "zero_stage"), ("zero_optimization", "stage"))
_CLIPPING = (("deepspeed_config", "gradient_clipping"), ("gradient_clipping",))
_DISTRIBUTED_TYPE = (("distributed_type",),)
_FSDP_VERSION = (("fsdp_config", "fsdp_version"),)


FIXES: dict[str, Fix] = {
    "AW001": Fix(rename_to_suggestion, "unsafe", "rename the unknown key to the known key it is closest to"),
    "AW005": Fix(unquote_number, "safe", "remove the quotes around the number"),
    "AW006": Fix(integral_float, "safe", "write the whole-number float as an integer"),
    "AW007": Fix(quote_yaml_word, "safe", "quote `NO` so YAML keeps it a string"),
    "AW008": Fix(quote_yaml_word, "safe", "quote the word YAML 1.1 read as a boolean"),
    "AW009": Fix(legacy_key, "safe", "replace the legacy key with its current form"),
    "AW010": Fix(removed_key, "unsafe", "rename the removed key to its successor, or delete it"),
    "AW013": Fix(duplicate_json_key, "unsafe", "keep the last occurrence of the key, delete the others"),
    "AW017": Fix(delete_key, "safe", "delete the top-level key DeepSpeed ignores"),
    "AW110": Fix(delete_key, "safe", "delete the key the launcher never applies"),
    "AW113": Fix(delete_key, "safe", "delete the section the distributed type does not read",
                 premises=_DISTRIBUTED_TYPE),
    "AW201": Fix(delete_key, "unsafe", "delete the inline DeepSpeed key the JSON owns"),
    "AW206": Fix(delete_param_offload, "safe", "delete the parameter offload DeepSpeed ignores below ZeRO-3",
                 premises=_STAGE),
    "AW212": Fix(batch_identity, "unsafe", "write train_batch_size as micro-batch x accumulation x processes"),
    "AW214": Fix(json_gradient_accumulation, "unsafe", "delete the YAML's gradient accumulation; the JSON owns it"),
    "AW215": Fix(gradient_accumulation_auto, "unsafe", 'write gradient_accumulation_steps "auto" in the JSON '
                 "(or drop it from the YAML): the script's value applies"),
    "AW216": Fix(delete_key, "safe", "delete zero3_init_flag, which only ZeRO-3 reads",
                 premises=_STAGE),
    "AW217": Fix(stage3_init_flag, "unsafe", "set zero3_init_flag: true"),
    "AW218": Fix(delete_key, "unsafe", "delete reduce_bucket_size 0 (DeepSpeed's default applies)"),
    "AW221": Fix(optimizer_max_grad_norm, "unsafe", "move optimizer.params.max_grad_norm to gradient_clipping"),
    "AW226": Fix(delete_dropped_auto, "safe", 'delete the "auto" plain DeepSpeed drops (its default applies, as now)'),
    "AW232": Fix(unused_zero3_auto, "safe", 'delete the ZeRO-3 bucket key left "auto" below stage 3 (unused there)',
                 premises=_STAGE),
    "AW228": Fix(explicit_gradient_clipping, "safe",
                 "write the clipping the run uses (1.0; unset before DeepSpeed 0.19.3, 0.0)",
                 premises=_CLIPPING),
    "AW230": Fix(delete_key, "unsafe", "delete legacy_stage1"),
    "AW302": Fix(delete_key, "safe", "delete the FSDP1 option FSDP2 ignores",
                 premises=_FSDP_VERSION),
    "AW402": Fix(precision_declared_once, "unsafe", "delete the mixed_precision that disagrees with the JSON's"),
    "AW702": Fix(trainer_auto, "unsafe", 'set the DeepSpeed value the Trainer refuses to "auto"'),
}


def fix_for(code: str) -> Fix | None:
    return FIXES.get(code)


def fixes_markdown(names: dict[str, str]) -> list[str]:
    """The "Fixes" section of docs/rules.md, generated from this table."""
    out = ["## Fixes", "",
           "`accelwiz check --fix` applies the safe fixes, `--unsafe-fixes` the unsafe ones too, `--diff` shows them "
           "without writing. A fix is kept only when the YAML and its JSON, checked together, then have no error "
           "they did not have before (a fix that exposes another fixable finding, a renamed key's quoted number, is "
           "judged with that one fixed too, and both are applied); YAML edits keep comments, key order and quoting, "
           "JSON edits change only the bytes they touch.", "",
           "| code | name | applicability | the fix |", "|---|---|---|---|"]
    out += [f"| [{code}](#{code.lower()}) | `{names.get(code, '')}` | {fix.applicability} | {fix.summary} |"
            for code, fix in sorted(FIXES.items())]
    return out
