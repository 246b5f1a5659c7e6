"""Read a file, decide by content whether it is an Accelerate config or a DeepSpeed config, and parse it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from accelwiz.document.json_reader import read_json
from accelwiz.document.model import Document, DocumentKind
from accelwiz.document.read import exists, read_text
from accelwiz.document.yaml_reader import read_yaml
from accelwiz.errors import InputError

# Keys that only an Accelerate config file has, and keys that only a DeepSpeed config has.
_ACCELERATE_MARKERS = {
    "compute_environment", "distributed_type", "num_processes", "num_machines", "machine_rank", "mixed_precision",
    "deepspeed_config", "fsdp_config", "use_cpu", "gpu_ids", "main_training_function", "megatron_lm_config",
    "dynamo_config", "fp8_config", "parallelism_config", "main_process_ip", "downcast_bf16", "tpu_name",
    "ec2_instance_type",
}
_DEEPSPEED_MARKERS = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization",
    "fp16", "bf16", "bfloat16", "optimizer", "scheduler", "gradient_clipping", "steps_per_print",
    "wall_clock_breakdown", "activation_checkpointing", "aio", "zero_allow_untested_optimizer", "amp",
    "communication_data_type", "flops_profiler", "tensor_parallel", "data_types", "checkpoint", "pipeline",
}


def detect_kind(data: Any, path: Path) -> DocumentKind:
    """Which tool reads this file, judged by its keys; the extension only breaks a tie."""
    if isinstance(data, dict):
        keys = set(data)
        accelerate, deepspeed = len(keys & _ACCELERATE_MARKERS), len(keys & _DEEPSPEED_MARKERS)
        if accelerate != deepspeed:
            return "accelerate" if accelerate > deepspeed else "deepspeed"
    return "deepspeed" if path.suffix.lower() in (".json", ".conf", ".hjson") else "accelerate"


def parse_text(text: str, path: Path, kind: DocumentKind | None = None) -> Document:
    """Parse config text as the tool that reads it does. JSON when it starts with '{' (DeepSpeed reads any name
    with hjson), YAML otherwise; but accelerate reads an Accelerate config not named `*.json` with
    yaml.safe_load whatever it looks like (`load_config_from_file`, accelerate/commands/config/config_args.py),
    so JSON-looking text there is read as YAML: a tab after a colon is refused and `1e8` is a string, as there;
    and a YAML flow mapping (`{distributed_type: MULTI_GPU}`) no JSON reader takes is YAML for accelerate."""
    looks_json = text.lstrip("\ufeff \t\r\n").startswith("{")
    try:
        data, syntax, spans = _parse_as(text, "json" if looks_json else "yaml", kind)
    except InputError:
        if not looks_json or not _may_be_yaml(path, kind):
            raise
        try:
            data, syntax, spans = _parse_as(text, "yaml", kind)
        except InputError:
            raise _parse_as_error(text, kind) from None
    resolved = kind or (detect_kind(data, path) if isinstance(data, dict) else None)
    if syntax == "json" and resolved == "accelerate" and path.suffix.lower() != ".json":
        data, syntax, spans = _parse_as(text, "yaml", kind)
    if data is None:
        raise InputError(f"{path}: the file is empty", hint="write at least `distributed_type: 'NO'`")
    if not isinstance(data, dict):
        raise InputError(f"{path}: the top level is a {_shape(data)}, not a mapping of keys to values",
                         hint="a config file is a set of `key: value` lines")
    key_spans, value_spans, plain, duplicates = spans
    return Document(path=path, kind=kind or detect_kind(data, path), syntax=syntax, data=data,
                    key_spans=key_spans, value_spans=value_spans, plain_scalars=plain, duplicate_keys=duplicates,
                    text=text)


def _may_be_yaml(path: Path, kind: DocumentKind | None) -> bool:
    """accelerate reads a config not named `*.json` with yaml.safe_load; a DeepSpeed JSON is never YAML."""
    return kind == "accelerate" or (kind is None and path.suffix.lower() not in (".json", ".conf", ".hjson"))


def _parse_as_error(text: str, kind: DocumentKind | None) -> InputError:
    """The JSON reader's error (with each consumer's verdict) when the YAML reading fails too."""
    try:
        _parse_as(text, "json", kind)
    except InputError as exc:
        return exc
    return InputError("unreadable as JSON and as YAML")


def _parse_as(text: str, syntax: str, kind: DocumentKind | None) -> tuple[Any, str, tuple]:
    if syntax == "json":
        try:
            data, reader = read_json(text)
        except InputError as exc:
            # hjson reads what accelwiz's reader cannot place (a member ended by a newline): a DeepSpeed JSON
            # checked as DeepSpeed's own reader sees it, without key positions; AW015/AW016 say who refuses it
            from accelwiz.document.consumers import hjson_only_data

            lenient = hjson_only_data(text) if kind in (None, "deepspeed") else None
            if lenient is None:
                raise _refused_json(text, exc, kind) from None
            return lenient, "json", ({}, {}, {}, [])
        return data, "json", (reader.key_spans, reader.value_spans, {}, reader.duplicate_keys)
    try:
        data, tree = read_yaml(text)
    except InputError as exc:
        if kind not in (None, "accelerate") or not exc.message.startswith(_INVALID_YAML):
            raise
        # PyYAML's composer gave the message, so it is the one accelerate's yaml.safe_load gives
        raise InputError(_INVALID_YAML + "accelerate reads it with yaml.safe_load: " +
                         exc.message.removeprefix(_INVALID_YAML), hint=exc.hint) from None
    return data, "yaml", (tree.key_spans, tree.value_spans, tree.plain_scalars, tree.duplicate_keys)


_INVALID_YAML = "invalid YAML: "


def _refused_json(text: str, exc: InputError, kind: DocumentKind | None) -> InputError:
    """accelwiz's reader refused a JSON: say what each library that may consume it makes of it, in its own words
    (a file hjson reads but accelwiz cannot place is still one accelerate and the Trainer refuse)."""
    if kind not in (None, "deepspeed"):
        return exc
    from accelwiz.document.consumers import read_as_consumers

    verdicts = read_as_consumers(text)
    strict, lenient = verdicts["json.load"], verdicts["hjson"]
    said = [f"accelerate and the HF Trainer read it with json.load: "
            + ("accepted" if strict.accepted else strict.describe()),
            "DeepSpeed's own reader (hjson): " + ("accepted" if lenient.accepted else lenient.describe())]
    if strict.accepted or lenient.accepted:
        said.append("accelwiz cannot check it as written")
    return InputError(f"{exc.message}; {'; '.join(said)}", hint=exc.hint)


def load_document(path: Path, kind: DocumentKind | None = None) -> Document:
    """Read and parse one file; every failure is an InputError with the file name in it."""
    if not exists(path):  # False for a name too long or with a NUL byte: said as "no such file"
        raise InputError(f"{path}: no such file", hint="check the path, or run `accelwiz init` to write a config")
    return document_from_text(read_text(path), path, kind)


def document_from_text(text: str, path: Path, kind: DocumentKind | None = None) -> Document:
    """`parse_text` of a file's text, its errors prefixed with the file name."""
    try:
        return parse_text(text, path, kind)
    except InputError as exc:
        if str(path) in exc.message:
            raise
        raise InputError(f"{path}: {exc.message}", hint=exc.hint) from None


def _shape(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "value")

