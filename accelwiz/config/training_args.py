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
judged as argparse judges it (tests/crosscheck/test_trainer_resolver.py compares both with the installed library).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from accelwiz.errors import InputError

Kind = Literal["int", "float", "bool", "optional_bool", "str", "deepspeed", "mapping", "fsdp"]

# fields TrainingArguments json.loads when given a string starting with "{" (its _VALID_DICT_FIELDS)
_MAPPING_KINDS = ("deepspeed", "mapping")


@dataclass(frozen=True)
class FieldSpec:
    kind: Kind
    default: Any


# transformers 5 `TrainingArguments` defaults for the fields that feed DeepSpeed, accelerate and the batch.
FIELDS: dict[str, FieldSpec] = {
    "per_device_train_batch_size": FieldSpec("int", 8),
    "gradient_accumulation_steps": FieldSpec("int", 1),
    "max_grad_norm": FieldSpec("float", 1.0),
    "learning_rate": FieldSpec("float", 5e-05),
    "adam_beta1": FieldSpec("float", 0.9),
    "adam_beta2": FieldSpec("float", 0.999),
    "adam_epsilon": FieldSpec("float", 1e-08),
    "weight_decay": FieldSpec("float", 0.0),
    "fp16": FieldSpec("bool", False),
    "bf16": FieldSpec("bool", False),
    "fp16_full_eval": FieldSpec("bool", False),
    "bf16_full_eval": FieldSpec("bool", False),
    "save_on_each_node": FieldSpec("bool", False),
    "auto_find_batch_size": FieldSpec("bool", False),
    "use_cpu": FieldSpec("bool", False),
    "gradient_checkpointing": FieldSpec("optional_bool", None),
    "activation_checkpointing": FieldSpec("optional_bool", None),
    "deepspeed": FieldSpec("deepspeed", None),
    "optim": FieldSpec("str", "adamw_torch_fused"),
    "lr_scheduler_type": FieldSpec("str", "linear"),
    "warmup_steps": FieldSpec("float", 0),
    "max_steps": FieldSpec("int", -1),
    "num_train_epochs": FieldSpec("float", 3.0),
    # the evaluation and checkpoint schedule: load_best_model_at_end ties the two (rules/trainer_schedule.py)
    "load_best_model_at_end": FieldSpec("bool", False),
    "eval_strategy": FieldSpec("str", "no"),
    "save_strategy": FieldSpec("str", "steps"),
    "eval_steps": FieldSpec("float", None),
    "save_steps": FieldSpec("float", 500),
    "logging_steps": FieldSpec("float", 500),
    "save_only_model": FieldSpec("bool", False),  # what DeepSpeed/FSDP can reload (rules/trainer_wrapper.py)
    "tf32": FieldSpec("optional_bool", None),  # refused without Ampere tensor cores (rules/trainer_hardware.py)
    # FSDP through the Trainer (accelwiz.config.trainer_fsdp builds the plugin arguments from them):
    # `fsdp` is `str | None` with nargs="?", const=True, so a bare --fsdp is True and "full_shard auto_wrap" a string
    "fsdp": FieldSpec("fsdp", None),
    "fsdp_config": FieldSpec("mapping", None),
}

# Every `TrainingArguments` field of transformers 5.x (for abbreviations and for "known but not read" notes).
_ALL_FIELD_NAMES = """
accelerator_config activation_checkpointing activation_checkpointing_kwargs adam_beta1 adam_beta2 adam_epsilon
auto_find_batch_size average_tokens_across_devices batch_eval_metrics bf16 bf16_full_eval data_seed
dataloader_drop_last dataloader_in_order dataloader_multiprocessing_context dataloader_num_workers
dataloader_persistent_workers dataloader_pin_memory dataloader_prefetch_factor ddp_backend ddp_broadcast_buffers
ddp_bucket_cap_mb ddp_find_unused_parameters ddp_static_graph ddp_timeout debug deepspeed disable_tqdm do_eval
do_predict do_train enable_jit_checkpoint eval_accumulation_steps eval_delay eval_do_concat_batches eval_on_start
eval_steps eval_strategy eval_use_gather_object fp16 fp16_full_eval fsdp fsdp_config full_determinism
gradient_accumulation_steps gradient_checkpointing gradient_checkpointing_kwargs greater_is_better hub_always_push
hub_model_id hub_private_repo hub_revision hub_strategy hub_token ignore_data_skip include_for_metrics
include_num_input_tokens_seen label_names label_smoothing_factor learning_rate length_column_name
liger_kernel_config load_best_model_at_end local_rank log_level log_level_replica log_on_each_node
logging_first_step logging_nan_inf_filter logging_steps logging_strategy lr_scheduler_kwargs lr_scheduler_type
max_grad_norm max_steps metric_for_best_model neftune_noise_alpha num_train_epochs optim optim_args
optim_target_modules output_dir parallelism_config per_device_eval_batch_size per_device_train_batch_size
prediction_loss_only project push_to_hub remove_unused_columns report_to restore_callback_states_from_checkpoint
resume_from_checkpoint run_name save_on_each_node save_only_model save_steps save_strategy save_total_limit seed
skip_memory_metrics tf32 torch_compile torch_compile_backend torch_compile_mode torch_empty_cache_steps
trackio_bucket_id trackio_space_id trackio_static_space_id train_sampling_strategy use_cache use_cpu
use_liger_kernel warmup_steps weight_decay
"""
ALL_FIELDS: frozenset[str] = frozenset(_ALL_FIELD_NAMES.split())

# TrainingArguments fields of transformers 4.x that transformers 5 no longer has, and what to write instead.
# HfArgumentParser refuses them ("Some specified arguments are not used by the HfArgumentParser", hf_argparser.py;
# "Some keys are not used" for an arguments file) unless the script's own dataclass defines them.
REMOVED_IN_5: dict[str, str] = {
    "warmup_ratio": "write --warmup_steps with the ratio (a value below 1 is a fraction of the total steps)",
    "per_gpu_train_batch_size": "write --per_device_train_batch_size",
    "per_gpu_eval_batch_size": "write --per_device_eval_batch_size",
    "no_cuda": "write --use_cpu",
    "evaluation_strategy": "write --eval_strategy",
    "overwrite_output_dir": "leave it out: the Trainer writes into an existing output_dir",
    "logging_dir": "leave it out, or set the logger's own variable (TENSORBOARD_LOGGING_DIR)",
    "save_safetensors": "leave it out: checkpoints are always safetensors",
    # transformers 4 took min_num_params > 0 as the size-based policy; 5 needs the policy named (_process_fsdp_args)
    "fsdp_min_num_params": "put min_num_params in --fsdp_config with auto_wrap_policy SIZE_BASED_WRAP",
    "fsdp_transformer_layer_cls_to_wrap": "put transformer_layer_cls_to_wrap in --fsdp_config",
    "use_mps_device": "leave it out: MPS is used when available",
    "half_precision_backend": "leave it out: mixed precision goes through accelerate",
    "fp16_backend": "leave it out: mixed precision goes through accelerate",
    "fp16_opt_level": "leave it out: apex AMP is gone",
    "use_ipex": "leave it out",
    "torchdynamo": "write --torch_compile_backend",
    "dispatch_batches": "put dispatch_batches in --accelerator_config",
    "split_batches": "put split_batches in --accelerator_config",
    "include_inputs_for_metrics": "write --include_for_metrics inputs",
    "include_tokens_per_second": "leave it out",
    "push_to_hub_token": "write --hub_token",
}

# `--optim` values: transformers 5.25's OptimizerNames (training_args.py). The field is typed `OptimizerNames | str`,
# so HfArgumentParser takes any string and `TrainingArguments.__post_init__` refuses the rest with ValueError
# ("'adamw_hf' is not a valid OptimizerNames"); tests/config/test_training_args_values.py compares the installed enum.
OPTIMIZERS: frozenset[str] = frozenset("""
adamw_torch adamw_torch_fused adamw_torch_xla adamw_torch_npu_fused adafactor adamw_anyprecision adamw_torch_4bit
adamw_torch_8bit ademamix sgd adagrad adamw_bnb_8bit adamw_8bit ademamix_8bit lion_8bit lion_32bit paged_adamw_32bit
paged_adamw_8bit paged_ademamix_32bit paged_ademamix_8bit paged_lion_32bit paged_lion_8bit rmsprop rmsprop_bnb
rmsprop_bnb_8bit rmsprop_bnb_32bit galore_adamw galore_adamw_8bit galore_adafactor galore_adamw_layerwise
galore_adamw_8bit_layerwise galore_adafactor_layerwise lomo adalomo grokadamw schedule_free_radam schedule_free_adamw
schedule_free_sgd apollo_adamw apollo_adamw_layerwise stable_adamw
""".split())
# OptimizerNames values of transformers 4.x that 5 removed, and what to write instead
REMOVED_OPTIMIZERS_IN_5: dict[str, str] = {
    "adamw_hf": "write adamw_torch (transformers' own AdamW is gone; torch's computes the same update)",
    "adamw_apex_fused": "write adamw_torch_fused (apex is no longer supported)",
}

# Bool fields whose default is true: HfArgumentParser adds a `--no_<name>` complement for them.
_TRUE_BY_DEFAULT = frozenset({"dataloader_pin_memory", "eval_do_concat_batches", "logging_nan_inf_filter",
                              "remove_unused_columns", "skip_memory_metrics", "use_cache",
                              "average_tokens_across_devices", "dataloader_in_order"})

_TRUE_WORDS = ("yes", "true", "t", "y", "1")
_FALSE_WORDS = ("no", "false", "f", "n", "0")


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


def defaults() -> dict[str, Any]:
    return {name: spec.default for name, spec in FIELDS.items()}


def _convert(name: str, text: str) -> tuple[Any, str | None]:
    """A string converted with the field's argparse type: (value, None) or (None, what is wrong)."""
    kind = FIELDS[name].kind
    if kind in ("bool", "optional_bool"):
        if text.lower() in _TRUE_WORDS:
            return True, None
        if text.lower() in _FALSE_WORDS:
            return False, None
        return None, "expected one of yes/no, true/false, t/f, y/n, 1/0"
    if kind == "int":
        try:
            return int(text), None
        except ValueError:
            return None, "invalid int value"
    if kind == "float":
        try:
            return float(text), None
        except ValueError:
            return None, "invalid float value"
    if name == "optim" and text not in OPTIMIZERS:
        removed = REMOVED_OPTIMIZERS_IN_5.get(text)
        return None, (f"removed from OptimizerNames in transformers 5; {removed}" if removed else
                      "not an OptimizerNames value of transformers 5 (TrainingArguments refuses it)")
    if kind in _MAPPING_KINDS and text.startswith("{"):
        # TrainingArguments.__post_init__ json.loads a dict field given as a string starting with "{".
        try:
            return json.loads(text), None
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON ({exc.msg})"
    return text, None


def _option_table() -> dict[str, tuple[str, bool | None]]:
    """Every option string HfArgumentParser registers -> (field, the value a `--no_` option stores or None)."""
    table: dict[str, tuple[str, bool | None]] = {}
    for name in ALL_FIELDS:
        table[f"--{name}"] = (name, None)
        table[f"--{name.replace('_', '-')}"] = (name, None)
    for name in _TRUE_BY_DEFAULT:
        table[f"--no_{name}"] = (name, False)
        table[f"--no-{name.replace('_', '-')}"] = (name, False)
    return table


def _takes_optional_value(name: str) -> bool:
    return name in FIELDS and FIELDS[name].kind in ("bool", "optional_bool", "fsdp")


def parse_argv(argv: list[str]) -> TrainerArguments:
    """The arguments after `--`, read as HfArgumentParser(TrainingArguments).parse_known_args reads them."""
    options = _option_table()
    values, given = defaults(), {}
    problems: list[ArgumentProblem] = []
    ignored: list[str] = []
    abbreviated: list[str] = []
    position = 0
    while position < len(argv):
        token = argv[position]
        position += 1
        if not token.startswith("--") or token == "--":
            continue  # a positional or a value of an option accelwiz does not read
        option, has_inline, inline = token.partition("=")
        removed = option[2:].replace("-", "_")
        if removed in REMOVED_IN_5 and option not in options:
            problems.append(ArgumentProblem(removed, option, f"{option} is no TrainingArguments field in "
                                                             f"transformers 5: {REMOVED_IN_5[removed]}"))
            if not has_inline and position < len(argv) and not argv[position].startswith("--"):
                position += 1  # its value
            continue
        target = options.get(option)
        if target is None:
            matches = {options[o] for o in options if o.startswith(option)}
            names = {m[0] for m in matches}
            if len(names) == 1:  # argparse's allow_abbrev: a unique prefix selects the option
                target = matches.pop()
                abbreviated.append(f"{option} -> --{target[0]}")
        if target is None:
            ignored.append(option)
            if not has_inline and position < len(argv) and not argv[position].startswith("--"):
                position += 1  # its value
            continue
        name, negated = target
        if negated is not None:
            if name in FIELDS:
                values[name], given[name] = negated, option
            continue
        if name not in FIELDS:
            ignored.append(option)
            if not has_inline and position < len(argv) and not argv[position].startswith("-"):
                position += 1
            continue
        if has_inline:
            text = inline
        elif _takes_optional_value(name) and (position >= len(argv) or argv[position].startswith("-")):
            values[name], given[name] = True, option  # nargs="?", const=True
            continue
        elif position < len(argv) and not (argv[position].startswith("-") and not _is_number(argv[position])):
            text = argv[position]
            position += 1
        else:
            problems.append(ArgumentProblem(name, option, f"{option}: expected one argument"))
            continue
        value, error = _convert(name, text)
        written = f"{option}={text}" if has_inline else f"{option} {text}"
        if error:
            problems.append(ArgumentProblem(name, written, f"{option}: {error}: {text!r}"))
            continue
        values[name], given[name] = value, written
    notes = []
    if abbreviated:
        notes.append("abbreviated options, as argparse completes them: " + ", ".join(abbreviated))
    if ignored:
        notes.append(f"ignored {len(ignored)} argument(s) accelwiz does not read: " + " ".join(dict.fromkeys(ignored)))
    unread = tuple(dict.fromkeys(o.lstrip("-").replace("-", "_") for o in ignored))
    return _finish(TrainerArguments(values, given, "command line", None, tuple(notes), tuple(problems),
                                    unread=unread))


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def parse_file(path: Path) -> TrainerArguments:
    """A JSON or YAML arguments file (a mapping of TrainingArguments field names to values)."""
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
        data = {}
    if not isinstance(data, dict):
        raise InputError(f"training arguments file `{path}` holds a {type(data).__name__}, not a mapping",
                         hint="write `name: value` pairs, e.g. `per_device_train_batch_size: 4`")
    values, given = defaults(), {}
    problems: list[ArgumentProblem] = []
    ignored = []
    for key, raw in data.items():
        name = str(key)
        if name in REMOVED_IN_5:
            problems.append(ArgumentProblem(name, f"{name}: {raw!r}", f"{name} is no TrainingArguments field in "
                                                                   f"transformers 5: {REMOVED_IN_5[name]}"))
            continue
        if name not in FIELDS:
            ignored.append(name)
            continue
        where = f"{path.name}: {name}"
        if isinstance(raw, str):
            value, error = _convert(name, raw)
            if error:
                problems.append(ArgumentProblem(name, f"{name}: {raw!r}", f"{name}: {error}: {raw!r}"))
                continue
        else:
            value, error = raw, _type_problem(name, raw)
            if error:
                problems.append(ArgumentProblem(name, f"{name}: {raw!r}", f"{name}: {error}"))
                continue
        values[name], given[name] = value, where
    notes = []
    if ignored:
        notes.append(f"ignored {len(ignored)} argument(s) accelwiz does not read: " + ", ".join(ignored))
    return _finish(TrainerArguments(values, given, path.name, path, tuple(notes), tuple(problems),
                                    unread=tuple(ignored)))


def _type_problem(name: str, value: Any) -> str | None:
    """A non-string value the field cannot hold (TrlParser hands it to TrainingArguments unconverted)."""
    kind = FIELDS[name].kind
    if value is None:  # Optional fields (eval_steps: float | None) take null
        optional = kind in ("optional_bool", *_MAPPING_KINDS) or FIELDS[name].default is None
        return None if optional else "null is not a value for this argument"
    if kind == "int" and (isinstance(value, bool) or not (isinstance(value, int) or
                                                          (isinstance(value, float) and value.is_integer()))):
        return f"expected an integer, got {value!r}"
    if kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"expected a number, got {value!r}"
    if kind in ("bool", "optional_bool") and not isinstance(value, (bool, int)):
        return f"expected true or false, got {value!r}"
    if kind in _MAPPING_KINDS and not isinstance(value, (str, dict)):
        return f"expected a path or a mapping, got {value!r}"
    if kind == "fsdp" and not isinstance(value, (str, bool, list)):
        return f"expected true, a string of options or a list, got {value!r}"
    if kind == "str" and not isinstance(value, str):
        return f"expected text, got {value!r}"
    return None


def _finish(args: TrainerArguments) -> TrainerArguments:
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
    return _finish(replace(args, values=values, given=given, notes=notes, trl_config="sft" if sft else "trl",
                           problems=tuple(p for p in args.problems if not p.message.startswith("At most one"))))


# What a script that trains with the HF Trainer (or TRL's trainers) contains.
_TRAINER_MARKERS = ("TrainingArguments", "Seq2SeqTrainingArguments", "HfArgumentParser", "TrlParser", "SFTConfig",
                    "DPOConfig", "GRPOConfig", "Trainer(")


def trainer_arguments_for_script(script: Path, argv: list[str]) -> TrainerArguments | None:
    """The Trainer arguments of `run SCRIPT -- ARGS`, when SCRIPT is a Trainer script; None otherwise.

    A TRL-style `--config recipe.yaml` (TrlParser) is read as the arguments file, the rest of the line over it."""
    from accelwiz.document.read import read_bytes
    from accelwiz.errors import InputError

    try:  # bounded, a regular file: a FIFO never blocks, a 7 GiB script is not read whole (issue 32)
        source = read_bytes(script, what="a training script", max_bytes=16 * 1024 * 1024).decode("utf-8", "replace")
    except InputError:
        return None
    if not any(marker in source for marker in _TRAINER_MARKERS):
        return None
    file: Path | None = None
    rest = list(argv)
    for position, token in enumerate(argv):
        option, has_inline, inline = token.partition("=")
        if option == "--config" and "TrlParser" in source:
            value = inline if has_inline else (argv[position + 1] if position + 1 < len(argv) else "")
            if value and Path(value).suffix.lower() in (".yaml", ".yml", ".json") and Path(value).is_file():
                file = Path(value)
                rest = argv[:position] + argv[position + (1 if has_inline else 2):]
            break
    arguments = load_training_arguments(file, rest) or parse_argv([])
    if re.search(r"^\s*(from trl\b|import trl\b)", source, re.M) or "TrlParser" in source:
        return with_trl_defaults(arguments, sft="SFTConfig" in source)
    return arguments
