"""The mends of the fix table (accelwiz/fix/table.py): each receives the unit's CheckContext and the Diagnostic, and
returns the edits per file role, or None when this finding has no unambiguous mend (the rule stays fixable in
general; this case is reported as not fixed).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from accelwiz.fix.edits import AddKey, DeleteKey, Edit, RenameKey, SetValue

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext
    from accelwiz.rules.diagnostic import Diagnostic

RoleEdits = list[tuple[str, Edit]]  # (file role, edit)


def _role(ctx: CheckContext, diagnostic: Diagnostic) -> str | None:
    for role in ("accelerate", "deepspeed"):
        document = ctx.document(role)
        if document is not None and document.name == diagnostic.file:
            return role
    return None


def _value(ctx: CheckContext, role: str, path: tuple) -> Any:
    document = ctx.document(role)
    return document.get(*path) if document is not None else None


def _has(ctx: CheckContext, role: str, path: tuple) -> bool:
    document = ctx.document(role)
    return document is not None and document.has(*path)


def _hinted_name(diagnostic: Diagnostic) -> str | None:
    match = re.search(r"rename (?:it|the block) to `([^`]+)`", diagnostic.fix or "")
    return match.group(1) if match else None


def rename_to_suggestion(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW001 (did you mean) and AW009/AW010 (a successor named in the hint): rename the key."""
    role, new = _role(ctx, diagnostic), _hinted_name(diagnostic)
    if role is None or new is None or not diagnostic.path:
        return None
    if _has(ctx, role, (*diagnostic.path[:-1], new)):
        return None  # both spellings present: which value wins is not ours to decide
    return [(role, RenameKey(diagnostic.path, new))]


def unquote_number(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW005: '8' -> 8."""
    role = _role(ctx, diagnostic)
    value = _value(ctx, role, diagnostic.path) if role else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        number: int | float = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return None
    return [(role, SetValue(diagnostic.path, number))]  # type: ignore[list-item]


def integral_float(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW006: 2.0 -> 2, and a quoted exponent '5e8' -> 500000000."""
    role = _role(ctx, diagnostic)
    value = _value(ctx, role, diagnostic.path) if role else None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        return None
    return [(role, SetValue(diagnostic.path, int(value)))]  # type: ignore[list-item]


def quote_yaml_word(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW007/AW008: the plain word YAML 1.1 turned into a boolean, written back quoted."""
    role = _role(ctx, diagnostic)
    document = ctx.document(role) if role else None
    if document is None or document.syntax != "yaml":
        return None
    written = document.plain_scalars.get(tuple(diagnostic.path))
    if written is None:
        return None
    return [(role, SetValue(diagnostic.path, written, quote="single"))]  # type: ignore[list-item]


def delete_key(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """Remove the key the finding is about (one that is ignored, or refused and without successor)."""
    role = _role(ctx, diagnostic)
    if role is None or not diagnostic.path or not _has(ctx, role, tuple(diagnostic.path)):
        return None
    return [(role, DeleteKey(diagnostic.path))]


def delete_param_offload(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW206: the whole `offload_param` block (DeepSpeed ignores it below ZeRO-3)."""
    path = tuple(diagnostic.path)
    if "offload_param" not in path:
        return None
    block = path[:path.index("offload_param") + 1]
    role = _role(ctx, diagnostic)
    if role is None or not _has(ctx, role, block):
        return None
    return [(role, DeleteKey(block))]


def removed_key(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW010: rename to the successor the hint names, else delete where the hint says to."""
    if _hinted_name(diagnostic):
        return rename_to_suggestion(ctx, diagnostic)
    if re.search(r"\b(remove|delete) (the|it)\b", diagnostic.fix or ""):
        return delete_key(ctx, diagnostic)
    return None


def legacy_key(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW009: rename; `cpu_offload`/`cpu_offload_param: true` become their offload blocks."""
    if _hinted_name(diagnostic):
        return rename_to_suggestion(ctx, diagnostic)
    role = _role(ctx, diagnostic)
    path = tuple(diagnostic.path)
    successors = {"cpu_offload": "offload_optimizer", "cpu_offload_param": "offload_param"}
    if role != "deepspeed" or len(path) != 2 or path[0] != "zero_optimization" or path[1] not in successors:
        return None
    value, block = _value(ctx, role, path), successors[path[1]]
    if _has(ctx, role, ("zero_optimization", block)) or value not in (True, False):
        return None
    edits: RoleEdits = [(role, DeleteKey(path))]
    if value is True:
        edits.append((role, AddKey(("zero_optimization",), block, {"device": "cpu"})))
    return edits


def duplicate_json_key(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW013: keep the last occurrence (the one Python's and hjson's readers keep), delete the others."""
    role = _role(ctx, diagnostic)
    if role is None:
        return None
    return [(role, DeleteKey(diagnostic.path, keep_last=True))]


def delete_dropped_auto(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW226: an "auto" that plain DeepSpeed's pydantic block drops for its default: the key goes, same run."""
    if "drops it" not in diagnostic.message:
        return None  # outside the pydantic blocks the string reaches the code: removing it changes the run
    return delete_key(ctx, diagnostic)


def explicit_gradient_clipping(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW228: write the clipping the run already uses in place of "auto" (1.0) or an absent key (DeepSpeed's
    default for the installed version: 1.0 from 0.19.3, 0.0 before)."""
    from accelwiz.rules.deepspeed.auto import deepspeed_default_clipping

    role = _role(ctx, diagnostic) or ("deepspeed" if ctx.deepspeed is not None else "accelerate")
    path, default = tuple(diagnostic.path), deepspeed_default_clipping(ctx)
    if role == "deepspeed":
        if _value(ctx, role, ("gradient_clipping",)) == "auto":
            return [(role, SetValue(("gradient_clipping",), 1.0))]
        if not _has(ctx, role, ("gradient_clipping",)):
            return [(role, AddKey((), "gradient_clipping", default))]
        return None
    if _value(ctx, role, ("deepspeed_config", "gradient_clipping")) == "auto":
        return [(role, SetValue(("deepspeed_config", "gradient_clipping"), 1.0))]
    if isinstance(_value(ctx, role, ("deepspeed_config",)), dict) and path[:1] == ("deepspeed_config",):
        return [(role, AddKey(("deepspeed_config",), "gradient_clipping", default))]
    return None


def optimizer_max_grad_norm(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW221: move optimizer.params.max_grad_norm to the top-level gradient_clipping."""
    path = tuple(diagnostic.path)
    value = _value(ctx, "deepspeed", path)
    if ctx.deepspeed is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    current = _value(ctx, "deepspeed", ("gradient_clipping",))
    edits: RoleEdits = [("deepspeed", DeleteKey(path))]
    if current in (None, "auto"):
        edits.append(("deepspeed", SetValue(("gradient_clipping",), value) if current == "auto"
                      else AddKey((), "gradient_clipping", value)))
    elif current != value:
        return None  # two different clippings: not ours to pick
    return edits


def precision_declared_once(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW402: the DeepSpeed JSON owns the precision: the `mixed_precision` that disagrees with it goes."""
    role = _role(ctx, diagnostic)
    if role is None or tuple(diagnostic.path) != ("mixed_precision",) or not _has(ctx, role, ("mixed_precision",)):
        return None
    return [(role, DeleteKey(("mixed_precision",)))]


def json_gradient_accumulation(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW214: the YAML and the JSON disagree on GA; the JSON owns it, so the YAML's copy goes."""
    path = ("deepspeed_config", "gradient_accumulation_steps")
    if ctx.accelerate is None or not _has(ctx, "accelerate", path) or ctx.deepspeed is None:
        return None
    return [("accelerate", DeleteKey(path))]


def batch_identity(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW212: train_batch_size written out as micro-batch x accumulation x world size."""
    if ctx.deepspeed is None:
        return None
    micro = _value(ctx, "deepspeed", ("train_micro_batch_size_per_gpu",))
    accumulation = _value(ctx, "deepspeed", ("gradient_accumulation_steps",))
    world = ctx.effective.num_processes.value if ctx.accelerate is not None else None
    numbers = [v for v in (micro, accumulation, world) if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if len(numbers) != 3 or not isinstance(_value(ctx, "deepspeed", ("train_batch_size",)), int):
        return None
    return [("deepspeed", SetValue(("train_batch_size",), micro * accumulation * world))]


def gradient_accumulation_auto(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW215: the JSON's fixed (or missing) GA becomes "auto"; the YAML's inline GA goes (the script sets it)."""
    role = _role(ctx, diagnostic)
    if role == "deepspeed" and ctx.deepspeed is not None:
        if _has(ctx, role, ("gradient_accumulation_steps",)):
            return [(role, SetValue(("gradient_accumulation_steps",), "auto"))]
        return [(role, AddKey((), "gradient_accumulation_steps", "auto"))]
    path = ("deepspeed_config", "gradient_accumulation_steps")
    if role == "accelerate" and _has(ctx, role, path):
        return [(role, DeleteKey(path))]
    return None


def unused_zero3_auto(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW232: a ZeRO-3 bucket key left "auto" below stage 3 is unused there: it goes (reduce_bucket_size stays:
    it is used at every stage, and what fills it depends on the transformers version)."""
    path = tuple(diagnostic.path)
    if not path or not str(path[-1]).startswith("stage3_") or _role(ctx, diagnostic) != "deepspeed":
        return None
    return [("deepspeed", DeleteKey(path))]


def trainer_auto(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW702: the DeepSpeed value the Trainer refuses becomes "auto" (the Trainer then fills its own)."""
    role = _role(ctx, diagnostic)
    if role != "deepspeed" or not diagnostic.path or not _has(ctx, role, tuple(diagnostic.path)):
        return None
    return [(role, SetValue(diagnostic.path, "auto"))]


def stage3_init_flag(ctx: CheckContext, diagnostic: Diagnostic) -> RoleEdits | None:
    """AW217: `zero3_init_flag: true` for ZeRO-3 from the YAML."""
    if ctx.accelerate is None or not isinstance(_value(ctx, "accelerate", ("deepspeed_config",)), dict):
        return None
    path = ("deepspeed_config", "zero3_init_flag")
    if _has(ctx, "accelerate", path):
        return [("accelerate", SetValue(path, True))]
    return [("accelerate", AddKey(("deepspeed_config",), "zero3_init_flag", True))]
