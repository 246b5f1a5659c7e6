"""AW012, AW013: a key written twice in one mapping, and which reader keeps which value (PyYAML's and json.load's
last one; DeepSpeed's own reader refuses the file). The other key, type and value rules (AW001-AW011) are in
`schema_rules.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule


@rule("AW012", "duplicate-key", Severity.WARNING, fix="Remove all but one occurrence of the key")
def duplicate_yaml_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a key written twice in the same mapping of a YAML file, or of a DeepSpeed JSON that only accelerate or
    the HF Trainer read (a JSON DeepSpeed's own reader may read is AW013's).

    ## Why is this bad?
    PyYAML (accelerate's `yaml.safe_load`) and `json.load` (accelerate's and the Trainer's reader of the DeepSpeed
    JSON) silently keep the last value, so an earlier line that looks authoritative has no effect.

    ## Example
    ```yaml
    debug: true
    debug: false
    ```
    Use instead: one `debug:` line.
    ```yaml
    debug: true
    ```
    """
    from accelwiz.rules.deepspeed.readers import known_consumers

    json_read_strictly = bool(known_consumers(ctx))
    for document in ctx.documents:
        if document.syntax == "yaml" or json_read_strictly:
            reader = "yaml.safe_load" if document.syntax == "yaml" else "json.load"
            for path, _ in document.duplicate_keys:
                yield Finding(document.kind, path, f"`{'.'.join(map(str, path))}` is written more than once; "
                              f"{reader} keeps the last value, {document.get(*path)!r}")


@rule("AW013", "duplicate-json-key", Severity.ERROR, fix="Remove all but one occurrence of the key")
def duplicate_json_key(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a key written twice in the same object of a JSON file that DeepSpeed's own reader may read (the
    `deepspeed` launcher, `deepspeed.initialize(config=path)`): a JSON checked alone. With a YAML or the Trainer's
    arguments, accelerate or the Trainer read it with `json.load`, which keeps the last value (AW012).

    ## Why is this bad?
    DeepSpeed refuses the file: `ValueError: Duplicate keys in DeepSpeed config` (`DeepSpeedConfig.__init__`
    reads it with `hjson.load(..., object_pairs_hook=dict_raise_error_on_duplicate_keys)`).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "train_micro_batch_size_per_gpu": 8}
    ```
    Use instead: one occurrence.
    ```json
    {"train_micro_batch_size_per_gpu": 4}
    ```
    """
    from accelwiz.rules.deepspeed.readers import known_consumers

    if known_consumers(ctx):
        return  # read with json.load only: the last value wins (AW012)
    for document in ctx.documents:
        if document.syntax == "json":
            for path, _ in document.duplicate_keys:
                yield Finding(document.kind, path, f"`{'.'.join(map(str, path))}` is written more than once: "
                              "DeepSpeed's own reader (the `deepspeed` launcher) refuses the file; accelerate's "
                              f"and the HF Trainer's json.load keep the last value, {document.get(*path)!r}")
