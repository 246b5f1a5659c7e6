"""The HF Trainer's arguments: the third file of a run, read the way transformers 5 reads it.

Two forms are accepted:
- the training command line (`--bf16 --per_device_train_batch_size 4 ...`), read as `HfArgumentParser` reads it:
  `--flag value` and `--flag=value`, the dashed spelling (`--per-device-train-batch-size`), a unique abbreviation
  (argparse's `allow_abbrev`), a bool flag alone meaning true, `--bf16 false`, and `--no_<flag>` for flags whose
  default is true;
- an arguments file, JSON or YAML (the form TRL, alignment-handbook and most recipes use). Its values are read as
  `TrlParser` reads them: a string is converted with the field's type, as argparse converts a string default
  (`learning_rate: 2e-5`, which YAML 1.1 loads as a string, is the float 2e-05); other values are taken as written.

Only the fields that decide what DeepSpeed and accelerate use are modelled (`FIELDS`); every other argument is
ignored, with a note. `ALL_FIELDS` lists every `TrainingArguments` field of transformers 5 so an abbreviation is
judged as argparse judges it. The table of fields and how one value is converted are in trainer_fields.py; which
script is a Trainer script, and its arguments, in trainer_script.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from accelwiz.config.trainer_fields import (
    ALL_FIELDS,
    FIELDS,
    REMOVED_IN_5,
    TRUE_BY_DEFAULT,
    convert,
    defaults,
    type_problem,
)
from accelwiz.errors import InputError


@dataclass(frozen=True)
class ArgumentProblem:
    """A value transformers' parser (or `TrainingArguments`) refuses."""

    name: str
    written: str
    message: str


@dataclass(frozen=True)
class TrainerArguments:
    """The Trainer arguments of a run: each modelled field's value (the default when not given) and how it was
    written."""

    values: dict[str, Any]
    given: dict[str, str] = field(default_factory=dict)  # field -> how it was written ("--bf16", "args.yaml: bf16")
    source: str = "command line"
    path: Path | None = None
    notes: tuple[str, ...] = ()
    problems: tuple[ArgumentProblem, ...] = ()
    world_size: int | None = None  # the processes the Trainer runs in, when check's --num-processes says
    # the options (command line) or keys (file) no modelled field reads, by name: a TRL config field, the script's
    # own, or one no dataclass has (rules/trl_removed.py judges TRL's removed ones)
    unread: tuple[str, ...] = ()
    trl_config: str | None = None  # "sft" when read as an SFTConfig (check --trl), "trl" for TRL's other configs

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def is_given(self, name: str) -> bool:
        return name in self.given

    def where(self, name: str) -> str:
        """How a field was written, or that it is the default."""
        return self.given.get(name, f"{name} (default {self.values[name]!r})")

    @property
    def gradient_checkpointing(self) -> bool:
        """`activation_checkpointing`, falling back to its deprecated alias `gradient_checkpointing`."""
        value = self.values["activation_checkpointing"]
        if value is None:
            value = self.values["gradient_checkpointing"]
        return bool(value)

    def mixed_precision(self, launcher: str | None) -> str:
        """`TrainingArguments.mixed_precision`: the launcher's (ACCELERATE_MIXED_PRECISION) unless --fp16/--bf16."""
        if self.values["fp16"]:
            return "fp16"
        if self.values["bf16"]:
            return "bf16"
        return launcher or "no"

    @property
    def deepspeed(self) -> str | dict | None:
        return self.values["deepspeed"]



def _option_table() -> dict[str, tuple[str, bool | None]]:
    """Every option string HfArgumentParser registers -> (field, the value a `--no_` option stores or None)."""
    table: dict[str, tuple[str, bool | None]] = {}
    for name in ALL_FIELDS:
        table[f"--{name}"] = (name, None)
        table[f"--{name.replace('_', '-')}"] = (name, None)
    for name in TRUE_BY_DEFAULT:
        table[f"--no_{name}"] = (name, False)
        table[f"--no-{name.replace('_', '-')}"] = (name, False)
    return table


def _takes_optional_value(name: str) -> bool:
    return name in FIELDS and FIELDS[name].kind in ("bool", "optional_bool", "fsdp")


@dataclass
class _Reading:
    """What `parse_argv` has read so far."""

    values: dict[str, Any]
    given: dict[str, str] = field(default_factory=dict)
    problems: list[ArgumentProblem] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    abbreviated: list[str] = field(default_factory=list)


def parse_argv(argv: list[str]) -> TrainerArguments:
    """The arguments after `--`, read as HfArgumentParser(TrainingArguments).parse_known_args reads them."""
    options = _option_table()
    reading = _Reading(defaults())
    position = 0
    while position < len(argv):
        token = argv[position]
        position += 1
        if token.startswith("--") and token != "--":  # else a positional or a value of an option not read
            position = _read_option(reading, options, argv, token, position)
    notes = []
    if reading.abbreviated:
        notes.append("abbreviated options, as argparse completes them: " + ", ".join(reading.abbreviated))
    ignored = reading.ignored
    if ignored:
        notes.append(f"ignored {len(ignored)} argument(s) accelwiz does not read: " + " ".join(dict.fromkeys(ignored)))
    unread = tuple(dict.fromkeys(o.lstrip("-").replace("-", "_") for o in ignored))
    return with_post_init_problems(TrainerArguments(reading.values, reading.given, "command line", None,
                                                    tuple(notes), tuple(reading.problems), unread=unread))


def _read_option(reading: _Reading, options: dict[str, tuple[str, bool | None]], argv: list[str], token: str,
                 position: int) -> int:
    """One `--option[=value]` (argv[position - 1]) read into `reading`; returns the position after its value."""
    option, has_inline, inline = token.partition("=")
    value_follows = not has_inline and position < len(argv) and not argv[position].startswith("--")
    removed = option[2:].replace("-", "_")
    if removed in REMOVED_IN_5 and option not in options:
        reading.problems.append(ArgumentProblem(removed, option, f"{option} is no TrainingArguments field in "
                                                                 f"transformers 5: {REMOVED_IN_5[removed]}"))
        return position + 1 if value_follows else position  # and its value
    target = options.get(option) or _abbreviation(option, options, reading)
    if target is None:
        reading.ignored.append(option)
        return position + 1 if value_follows else position  # and its value
    name, negated = target
    if negated is not None:
        if name in FIELDS:
            reading.values[name], reading.given[name] = negated, option
        return position
    if name not in FIELDS:
        reading.ignored.append(option)
        value_follows = not has_inline and position < len(argv) and not argv[position].startswith("-")
        return position + 1 if value_follows else position
    if has_inline:
        text = inline
    elif _takes_optional_value(name) and (position >= len(argv) or argv[position].startswith("-")):
        reading.values[name], reading.given[name] = True, option  # nargs="?", const=True
        return position
    elif position < len(argv) and not (argv[position].startswith("-") and not _is_number(argv[position])):
        text = argv[position]
        position += 1
    else:
        reading.problems.append(ArgumentProblem(name, option, f"{option}: expected one argument"))
        return position
    value, error = convert(name, text)
    written = f"{option}={text}" if has_inline else f"{option} {text}"
    if error:
        reading.problems.append(ArgumentProblem(name, written, f"{option}: {error}: {text!r}"))
    else:
        reading.values[name], reading.given[name] = value, written
    return position


def _abbreviation(option: str, options: dict[str, tuple[str, bool | None]],
                  reading: _Reading) -> tuple[str, bool | None] | None:
    """argparse's allow_abbrev: a prefix of exactly one field's options selects that option."""
    matches = {options[o] for o in options if o.startswith(option)}
    if len({m[0] for m in matches}) != 1:
        return None
    target = matches.pop()
    reading.abbreviated.append(f"{option} -> --{target[0]}")
    return target


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def parse_file(path: Path) -> TrainerArguments:
    """A JSON or YAML arguments file (a mapping of TrainingArguments field names to values)."""
    values, given = defaults(), {}
    problems: list[ArgumentProblem] = []
    ignored = []
    for key, raw in _load_mapping(path).items():
        name = str(key)
        if name in REMOVED_IN_5:
            problems.append(ArgumentProblem(name, f"{name}: {raw!r}", f"{name} is no TrainingArguments field in "
                                                                   f"transformers 5: {REMOVED_IN_5[name]}"))
            continue
        if name not in FIELDS:
            ignored.append(name)
            continue
        if isinstance(raw, str):
            value, error = convert(name, raw)
            error = f"{error}: {raw!r}" if error else None
        else:
            value, error = raw, type_problem(name, raw)
        if error:
            problems.append(ArgumentProblem(name, f"{name}: {raw!r}", f"{name}: {error}"))
            continue
        values[name], given[name] = value, f"{path.name}: {name}"
    notes = []
    if ignored:
        notes.append(f"ignored {len(ignored)} argument(s) accelwiz does not read: " + ", ".join(ignored))
    return with_post_init_problems(TrainerArguments(values, given, path.name, path, tuple(notes), tuple(problems),
                                                    unread=tuple(ignored)))


def _load_mapping(path: Path) -> dict:
    """The arguments file's mapping (an empty file is an empty one); a one-line InputError otherwise."""
    from accelwiz.document.read import read_text  # bounded, a regular file: a FIFO or /dev/zero never hangs

    if not path.exists():
        raise InputError(f"training arguments file `{path}` not found",
                         hint="pass the JSON or YAML file the training script reads")
    try:
        text = read_text(path, what="a JSON or YAML arguments file")
    except InputError as exc:
        raise InputError(f"cannot read training arguments file `{path}`: {exc.message.removeprefix(f'{path}: ')}",
                         hint="pass a readable JSON or YAML file") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml  # TrlParser and HfArgumentParser.parse_yaml_file read it with yaml.safe_load

            data = yaml.safe_load(text)
    except (ValueError, Exception) as exc:  # yaml.YAMLError and json.JSONDecodeError
        raise InputError(f"training arguments file `{path}` is not valid JSON or YAML: {str(exc).splitlines()[0]}",
                         hint="fix the syntax; the file is a mapping of argument names to values") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"training arguments file `{path}` holds a {type(data).__name__}, not a mapping",
                         hint="write `name: value` pairs, e.g. `per_device_train_batch_size: 4`")
    return data


def with_post_init_problems(args: TrainerArguments) -> TrainerArguments:
    """What `TrainingArguments.__post_init__` refuses whatever the hardware: fp16 together with bf16."""
    problems = list(args.problems)
    if args["fp16"] and args["bf16"]:
        problems.append(ArgumentProblem("bf16", f"{args.where('fp16')} and {args.where('bf16')}",
                                        "At most one of fp16 and bf16 can be True, but not both"))
    if args["fp16_full_eval"] and args["bf16_full_eval"]:
        problems.append(ArgumentProblem("bf16_full_eval", "fp16_full_eval and bf16_full_eval",
                                        "At most one of fp16 and bf16 can be True for full eval, but not both"))
    if problems == list(args.problems):
        return args
    return replace(args, problems=tuple(problems))


def load_training_arguments(file: Path | None, argv: list[str] | None) -> TrainerArguments | None:
    """The arguments from a file, the command line, or both (the command line wins, as with TrlParser)."""
    if file is None and not argv:
        return None
    from_file = parse_file(file) if file is not None else None
    if not argv:
        return from_file
    from_argv = parse_argv(argv)
    if from_file is None:
        return from_argv
    values = {**from_file.values, **{k: from_argv.values[k] for k in from_argv.given}}
    given = {**from_file.given, **from_argv.given}
    return TrainerArguments(values, given, f"{from_file.source} + command line", from_file.path,
                            from_file.notes + from_argv.notes, from_file.problems + from_argv.problems)
