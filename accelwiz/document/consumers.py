"""A DeepSpeed JSON read by each library that consumes it, with that library's own reader.

The same bytes take different paths to a run, and the paths read them differently:

- accelerate (a YAML's `deepspeed_config.deepspeed_config_file`): `DeepSpeedPlugin.__post_init__`
  (accelerate/utils/dataclasses.py) builds `HfDeepSpeedConfig(path)`, whose `__init__` (accelerate/utils/
  deepspeed.py) does `json.load(open(path, encoding="utf-8"))`: strict JSON, a byte-order mark refused ("Unexpected
  UTF-8 BOM"), NaN and Infinity accepted, a duplicate key silently keeping its last value. DeepSpeed then gets the
  dict, never the file, so its own reader does not run.
- the HF Trainer (`--deepspeed ds.json`, and TRL's recipes, whose `deepspeed:` key becomes that argument through
  TrlParser's `yaml.safe_load`, trl/scripts/utils.py): `TrainingArguments.__post_init__` (transformers/
  training_args.py) builds `HfTrainerDeepSpeedConfig`, a subclass (transformers/integrations/deepspeed.py) of the
  same accelerate `HfDeepSpeedConfig`: the same `json.load`.
- DeepSpeed itself (the `deepspeed` launcher passes `--deepspeed_config` to the script, whose
  `deepspeed.initialize(args=...)` or `deepspeed.initialize(config=path)` reads it; deepspeed/launcher/runner.py
  never opens it): `load_ds_config` (deepspeed/runtime/tensor_parallel/init_utils.py) and `DeepSpeedConfig.__init__`
  (deepspeed/runtime/config.py) do `hjson.load(open(path), object_pairs_hook=dict_raise_error_on_duplicate_keys)`:
  comments, trailing commas, unquoted keys and a byte-order mark accepted, a duplicate key refused.

`read_as_consumers` runs the readers themselves on the text (the standard library's `json`, and `hjson` where it is
installed: it comes with deepspeed), so a verdict is the library's own, message included.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from accelwiz.document.model import Document

ReaderName = Literal["json.load", "hjson"]
ConsumerKey = Literal["accelerate", "trainer", "deepspeed"]


@dataclass(frozen=True)
class Consumer:
    key: ConsumerKey
    label: str
    reader: ReaderName


CONSUMERS: dict[ConsumerKey, Consumer] = {
    "accelerate": Consumer("accelerate", "accelerate", "json.load"),
    "trainer": Consumer("trainer", "the HF Trainer", "json.load"),
    "deepspeed": Consumer("deepspeed", "DeepSpeed's own reader (the `deepspeed` launcher, deepspeed.initialize)",
                          "hjson"),
}


@dataclass(frozen=True)
class ReaderVerdict:
    """One reader's outcome on a text: accepted, or refused with the reader's own message and position."""

    reader: ReaderName
    accepted: bool
    message: str = ""
    line: int = 1
    column: int = 1
    approximate: bool = False  # hjson is not installed: judged by accelwiz's reader (see `_hjson_verdict`)

    def describe(self) -> str:
        where = f" (line {self.line} column {self.column})" if not self.accepted and self.line else ""
        return f"{self.message}{where}"


def verdicts(document: Document) -> dict[ReaderName, ReaderVerdict]:
    """A JSON document's verdict from each reader; {} for YAML, or a document built without its text."""
    if document.syntax != "json" or document.text is None:
        return {}
    return read_as_consumers(document.text)


@lru_cache(maxsize=16)  # every rule of a unit asks about the same one or two texts
def read_as_consumers(text: str) -> dict[ReaderName, ReaderVerdict]:
    """The verdict of each reader a DeepSpeed JSON meets, on the text as the file holds it."""
    return {"json.load": _json_verdict(text), "hjson": _hjson_verdict(text)}


def _json_verdict(text: str) -> ReaderVerdict:
    """`json.load` of a file opened with encoding="utf-8" is `json.loads` of its text (BOM kept, so refused)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return ReaderVerdict("json.load", False, exc.msg, exc.lineno, exc.colno)
    except ValueError as exc:  # more than 4300 digits (sys.get_int_max_str_digits)
        return ReaderVerdict("json.load", False, str(exc), 0, 0)
    except RecursionError:
        return ReaderVerdict("json.load", False, "maximum recursion depth exceeded (nesting too deep)", 0, 0)
    return ReaderVerdict("json.load", True)


def raise_on_duplicate_keys(ordered_pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """DeepSpeed's `dict_raise_error_on_duplicate_keys` (deepspeed/runtime/config_utils.py), message and all;
    written out here because importing deepspeed would take seconds (a test compares the two)."""
    result = dict(ordered_pairs)
    if len(result) != len(ordered_pairs):
        keys = [key for key, count in Counter(pair[0] for pair in ordered_pairs).items() if count > 1]
        raise ValueError(f"Duplicate keys in DeepSpeed config: {keys}")
    return result


def _hjson_verdict(text: str) -> ReaderVerdict:
    if _plain_json(text):  # hjson reads JSON as JSON: skip its pure-Python parse (seconds for a MiB)
        return ReaderVerdict("hjson", True)
    try:
        import hjson
    except ImportError:  # deepspeed is not installed here; accelwiz's reader accepts a subset of hjson
        return _approximate_hjson(text)
    try:
        hjson.loads(text, object_pairs_hook=raise_on_duplicate_keys)
    except hjson.HjsonDecodeError as exc:
        return ReaderVerdict("hjson", False, exc.msg, exc.lineno, exc.colno)
    except ValueError as exc:  # duplicate keys; a number beyond int()'s digit limit
        return ReaderVerdict("hjson", False, str(exc), 0, 0)
    except RecursionError:
        return ReaderVerdict("hjson", False, "maximum recursion depth exceeded (nesting too deep)", 0, 0)
    return ReaderVerdict("hjson", True)


def _plain_json(text: str) -> bool:
    """Strict JSON with no duplicate key and no NaN or Infinity: what hjson, a superset of JSON, reads the same
    way (the differential test in tests/document/test_consumers.py runs both on such files)."""
    def refuse(_: str) -> None:
        raise ValueError("a constant hjson reads otherwise")

    try:
        json.loads(text, object_pairs_hook=raise_on_duplicate_keys, parse_constant=refuse)
    except (ValueError, RecursionError):
        return False
    return not text.startswith("\ufeff")


def _approximate_hjson(text: str) -> ReaderVerdict:
    """Without hjson: accelwiz's own reader (comments, trailing commas and a BOM accepted, as hjson does) plus
    DeepSpeed's duplicate-key refusal. It refuses some files hjson reads (unquoted keys, missing commas at a line
    end); the verdict says it is approximate."""
    from accelwiz.document.json_reader import read_json
    from accelwiz.errors import InputError

    try:
        _, reader = read_json(text)
    except InputError as exc:
        return ReaderVerdict("hjson", False, exc.message, 0, 0, approximate=True)
    if reader.duplicate_keys:
        keys = sorted({str(path[-1]) for path, _ in reader.duplicate_keys})
        return ReaderVerdict("hjson", False, f"Duplicate keys in DeepSpeed config: {keys}", 0, 0, approximate=True)
    return ReaderVerdict("hjson", True, approximate=True)


def duplicate_refusal(verdict: ReaderVerdict) -> bool:
    """The refusal is DeepSpeed's duplicate-key check (AW013 reports those by key)."""
    return not verdict.accepted and verdict.message.startswith("Duplicate keys in DeepSpeed config")


def hjson_only_data(text: str) -> dict[str, Any] | None:
    """The mapping DeepSpeed's own reader makes of a text accelwiz's reader refuses (a member ended by a newline
    with no comma, unquoted keys: hjson reads them, json.load does not), so a file whose consumer may be
    DeepSpeed alone is checked as DeepSpeed reads it (AW016 says the json.load consumers refuse it); None when
    hjson is not installed, refuses the text too, or reads no mapping."""
    try:
        import hjson
    except ImportError:
        return None
    try:
        data = hjson.loads(text, object_pairs_hook=raise_on_duplicate_keys)
    except (hjson.HjsonDecodeError, ValueError, RecursionError):
        return None
    return _plain(data) if isinstance(data, dict) else None


def _plain(value: Any) -> Any:
    """hjson's numbers and containers as json.load gives them (Decimal-free; dict and list)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
