"""TRL's own arguments (DPOConfig, GRPOConfig of trl 1.16) beside the Trainer's: what `check --kind dpo|grpo`
reads from the training command line after `--` and from a TRL recipe YAML.

`TrlArguments` extends `TrainerArguments` (accelwiz/config/training_args.py reads the Trainer's fields;
`with_trl_defaults` here applies TRL's bf16/checkpointing defaults), so every AW7xx rule sees the run as before;
the TRL rules (AW8xx) read `trl` and `kind`. Only the fields the AW8xx rules judge are read, converted with the
field's type as TrlParser's argparse would (`--use_vllm` alone is true, `--beta 0.04`, `--vllm_mode=server`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from accelwiz.config.training_args import TrainerArguments, with_post_init_problems

# name -> (type, DPOConfig default, GRPOConfig default); "absent" where the config has no such field
_ABSENT = object()
TRL_FIELDS: dict[str, tuple[str, Any, Any]] = {
    "num_generations": ("int", _ABSENT, 8),
    "num_generations_eval": ("optional_int", _ABSENT, None),
    "generation_batch_size": ("optional_int", _ABSENT, None),
    "steps_per_generation": ("optional_int", _ABSENT, None),
    "max_completion_length": ("optional_int", _ABSENT, 512),
    "max_length": ("optional_int", 1024, _ABSENT),
    "use_vllm": ("bool", _ABSENT, False),
    "vllm_mode": ("str", _ABSENT, "colocate"),
    "vllm_gpu_memory_utilization": ("float", _ABSENT, 0.3),
    "vllm_tensor_parallel_size": ("int", _ABSENT, 1),
    "vllm_max_model_length": ("optional_int", _ABSENT, None),
    "ds3_gather_for_generation": ("bool", _ABSENT, True),
    "beta": ("float", 0.1, 0.0),
    "sync_ref_model": ("bool", False, False),
    "precompute_ref_log_probs": ("bool", False, _ABSENT),
    "per_device_eval_batch_size": ("int", 8, 8),
    "eval_strategy": ("str", "no", "no"),
    "do_eval": ("bool", False, False),
    # the loss options the AW805-AW808 rules judge (DPO's loss_type is a list: see _LIST_IN_DPO)
    "loss_type": ("str", ["sigmoid"], "dapo"),
    "loss_weights": ("optional_float_list", None, _ABSENT),
    "f_divergence_type": ("str", "reverse_kl", _ABSENT),
    "label_smoothing": ("float", 0.0, _ABSENT),
    "use_weighting": ("bool", False, _ABSENT),
    "importance_sampling_level": ("str", _ABSENT, "token"),
    "scale_rewards": ("str", _ABSENT, "group"),
    "multi_objective_aggregation": ("str", _ABSENT, "sum_then_normalize"),
    "vllm_importance_sampling_correction": ("bool", _ABSENT, True),
    "vllm_importance_sampling_mode": ("str", _ABSENT, "sequence_mask"),
    "vllm_importance_sampling_clip_min": ("optional_float", _ABSENT, None),
    "vllm_importance_sampling_clip_max": ("optional_float", _ABSENT, 3.0),
    # the dtype the model is loaded in (resolution.load_dtype.trainer_load_dtype): the configs' model_init_kwargs
    # (a dict, or its JSON on the command line) and the TRL scripts' ModelConfig --dtype (--torch_dtype before it)
    "model_init_kwargs": ("str", None, None),
    "dtype": ("str", None, None),
    "torch_dtype": ("str", None, None),
}
# DPOConfig.loss_type is `list[str]` (HfArgumentParser: nargs="+", `--loss_type sigmoid sft`); GRPOConfig's a str
_LIST_IN_DPO = {"loss_type": "str_list"}
_TRUE = ("yes", "true", "t", "y", "1")
_FALSE = ("no", "false", "f", "n", "0")


@dataclass(frozen=True)
class TrlArguments(TrainerArguments):
    """The Trainer's arguments plus TRL's (`trl`: field -> value, every modelled field of the kind's config)."""

    kind: str = "sft"
    trl: dict[str, Any] = field(default_factory=dict)
    trl_given: dict[str, str] = field(default_factory=dict)

    def trl_where(self, name: str) -> str:
        return self.trl_given.get(name, f"{name} (default {self.trl.get(name)!r})")


def trl_defaults(kind: str) -> dict[str, Any]:
    column = 1 if kind == "dpo" else 2
    # a fresh list per call: DPO's loss_type default must not be shared between readings
    return {name: list(spec[column]) if isinstance(spec[column], list) else spec[column]
            for name, spec in TRL_FIELDS.items() if spec[column] is not _ABSENT}


def _type(kind: str, name: str) -> str:
    return _LIST_IN_DPO.get(name, TRL_FIELDS[name][0]) if kind == "dpo" else TRL_FIELDS[name][0]


def _convert(kind: str, text: str | list[str]) -> Any:
    """One option's value, as TrlParser's argparse would convert it (lists: the nargs="+" tokens)."""
    if kind.endswith("_list"):
        items = text if isinstance(text, list) else [text]
        if kind == "optional_float_list" and [i.lower() for i in items] in (["none"], ["null"]):
            return None
        return [float(i) for i in items] if "float" in kind else list(items)
    if isinstance(text, list):
        raise ValueError(f"expected one value, got {len(text)}")
    if kind == "optional_float" and text.lower() in ("none", "null"):
        return None
    if kind == "bool":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(f"expected true or false, got {text!r}")
    if kind in ("int", "optional_int"):
        if kind == "optional_int" and text.lower() in ("none", "null"):
            return None
        return int(text)
    if kind in ("float", "optional_float"):
        return float(text)
    return text


def read_trl(kind: str, file: Path | None, argv: list[str]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """TRL's fields for `kind` from a recipe file and the command line (the command line wins): (values, how
    each given one was written, problems)."""
    values, given, problems = trl_defaults(kind), {}, []
    if file is not None and file.is_file():
        data = _load(file)
        for name, raw in data.items() if isinstance(data, dict) else ():
            if name in values:
                try:
                    values[name] = _convert(_type(kind, name), raw) if isinstance(raw, str) else raw
                    given[name] = f"{file.name}: {name}"
                except ValueError as exc:
                    problems.append(f"{name}: {exc}")
    position = 0
    while position < len(argv):
        token = argv[position]
        position += 1
        option, has_inline, inline = token.partition("=")
        name = option[2:].replace("-", "_") if option.startswith("--") else ""
        if name not in values:
            continue
        spec = _type(kind, name)
        if has_inline:
            text = inline
        elif spec.endswith("_list"):  # nargs="+": every token up to the next option
            end = next((i for i in range(position, len(argv)) if argv[i].startswith("--")), len(argv))
            if end == position:
                problems.append(f"{option}: expected at least one argument")
                continue
            text, position = argv[position:end], end
        elif spec == "bool" and (position >= len(argv) or argv[position].startswith("--")):
            text = "true"
        elif position < len(argv):
            text, position = argv[position], position + 1
        else:
            problems.append(f"{option}: expected one argument")
            continue
        try:
            shown = " ".join(text) if isinstance(text, list) else text
            values[name], given[name] = _convert(spec, text), f"{option} {shown}" if not has_inline else token
        except ValueError as exc:
            problems.append(f"{option}: {exc}")
    return values, given, problems


def _load(file: Path) -> Any:
    try:
        text = file.read_text(encoding="utf-8")
        if file.suffix.lower() == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - training_args.parse_file already reported an unreadable file
        return None


def with_trl_defaults(args: TrainerArguments, *, sft: bool = False) -> TrainerArguments:
    """The arguments as a TRL config reads them: TRL's `_BaseConfig` (the base of SFTConfig, DPOConfig, GRPOConfig...)
    defaults `bf16` to `not fp16` and `gradient_checkpointing` to true; SFTConfig's learning rate is 2e-5. Values
    given explicitly keep their value."""
    values, given = dict(args.values), dict(args.given)
    applied = []
    if not args.is_given("bf16"):
        values["bf16"] = not values["fp16"]
        given["bf16"] = f"bf16 (TRL default: {'off, fp16 is given' if values['fp16'] else 'on, fp16 is not given'})"
        applied.append(f"bf16 {str(values['bf16']).lower()}")
    if not args.is_given("gradient_checkpointing") and not args.is_given("activation_checkpointing"):
        values["gradient_checkpointing"] = True
        given["gradient_checkpointing"] = "gradient_checkpointing (TRL default: on)"
        applied.append("gradient checkpointing on")
    if sft and not args.is_given("learning_rate"):
        values["learning_rate"] = 2e-05
        given["learning_rate"] = "learning_rate (SFTConfig default 2e-05)"
        applied.append("learning rate 2e-05")
    notes = args.notes + ((f"TRL's defaults: {', '.join(applied)}",) if applied else ())
    kept = tuple(p for p in args.problems if not p.message.startswith("At most one"))  # judged again below
    return with_post_init_problems(replace(args, values=values, given=given, notes=notes,
                                           trl_config="sft" if sft else "trl", problems=kept))


def with_trl(arguments: TrainerArguments | None, kind: str, file: Path | None, argv: list[str]) -> TrlArguments:
    """The Trainer's arguments (TRL's defaults applied) extended with TRL's fields for `kind` (dpo, grpo)."""
    from accelwiz.config.training_args import parse_argv

    base = with_trl_defaults(arguments if arguments is not None else parse_argv([]))
    values, given, problems = read_trl(kind, file, argv)
    notes = tuple(_without_trl_names(n, values) for n in base.notes) + tuple(f"TRL argument {p}" for p in problems)
    notes = tuple(n for n in notes if n)
    carried = {f.name: getattr(base, f.name) for f in fields(TrainerArguments)}  # world_size ... included
    return TrlArguments(**{**carried, "notes": notes}, kind=kind, trl=values, trl_given=given)


def _without_trl_names(note: str, values: dict[str, Any]) -> str:
    """training_args' "ignored N argument(s) accelwiz does not read: ..." less the TRL fields read here."""
    head, sep, names = note.partition(" accelwiz does not read: ")
    if not sep or not head.startswith("ignored"):
        return note
    kept = [n for n in names.replace(",", " ").split() if n.lstrip("-").replace("-", "_") not in values]
    return f"ignored {len(kept)} argument(s) accelwiz does not read: {' '.join(kept)}" if kept else ""

