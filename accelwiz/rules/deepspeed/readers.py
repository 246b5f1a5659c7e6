"""AW015-AW016: a DeepSpeed JSON that a library consuming it refuses to read.

Which libraries read the JSON depends on the path it takes (accelwiz.document.consumers): accelerate and the HF
Trainer read it with `json.load`, DeepSpeed's own reader (the `deepspeed` launcher, `deepspeed.initialize(config=
path)`) with hjson. accelwiz's own reader accepts what either does, so the verdicts come from the readers
themselves (`consumers.verdicts`).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.document import Document, KeyPath
from accelwiz.document.consumers import CONSUMERS, Consumer, ReaderVerdict, duplicate_refusal, verdicts
from accelwiz.rules.context import CheckContext
from accelwiz.rules.deepspeed._shared import hf_style
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

_STRICT_FIX = ("Write strict JSON: no comments, no trailing commas, no byte-order mark (accelerate and the HF "
               "Trainer read it with json.load)")


def known_consumers(ctx: CheckContext) -> list[Consumer]:
    """The libraries this unit says read its JSON: accelerate when checked with an Accelerate YAML, the Trainer
    when its arguments are given (`--deepspeed`, TRL's recipe), both when the JSON has "auto" on a key only they
    fill (DeepSpeed refuses "auto" there); [] when any of them may read it."""
    consumers = []
    if ctx.accelerate is not None:
        consumers.append(CONSUMERS["accelerate"])
    if ctx.training_args is not None and isinstance(getattr(ctx.training_args, "deepspeed", None), str):
        consumers.append(CONSUMERS["trainer"])
    if not consumers and ctx.deepspeed is not None and hf_style(ctx.deepspeed):
        consumers = [CONSUMERS["accelerate"], CONSUMERS["trainer"]]
    return consumers


def _label(ctx: CheckContext, consumer: Consumer) -> str:
    if consumer.key == "trainer" and getattr(ctx.training_args, "trl_config", None):
        return "the HF Trainer (TRL's recipe)"
    return consumer.label


def _nearest_key(document: Document, verdict: ReaderVerdict) -> KeyPath:
    """The last key written before the place the reader stopped: the finding's line is near the fault."""
    if not verdict.line:
        return ()
    before = [(span, path) for path, span in document.key_spans.items()
              if (span.line, span.column) <= (verdict.line, verdict.column)]
    return max(before)[1] if before else ()


def _judged(ctx: CheckContext) -> tuple[Document, dict] | None:
    document = ctx.deepspeed
    judged = verdicts(document) if document is not None else {}
    return (document, judged) if judged else None


def _said(ctx: CheckContext, consumers: list[Consumer], verdict: ReaderVerdict) -> str:
    """"accelerate reads it with json.load: <the reader's own message> (line L column C)"."""
    names = " and ".join(dict.fromkeys(_label(ctx, c) for c in consumers))
    approximate = " (judged without hjson, which is not installed)" if verdict.approximate else ""
    verb = "reads" if len(consumers) == 1 else "read"
    return f"{names} {verb} it with {verdict.reader}: {verdict.describe()}{approximate}"


def _refused_by(ctx: CheckContext, consumers: list[Consumer], verdict: ReaderVerdict) -> str:
    """"refused by accelerate and the HF Trainer (json.load: <the reader's own message>)"."""
    names = " and ".join(dict.fromkeys(_label(ctx, c) for c in consumers))
    approximate = "; judged without hjson, which is not installed" if verdict.approximate else ""
    return f"refused by {names} ({verdict.reader}: {verdict.describe()}{approximate})"


_HF = [CONSUMERS["accelerate"], CONSUMERS["trainer"]]
_DEEPSPEED = [CONSUMERS["deepspeed"]]
_LENIENT_FIX = "Write values both readers take: numbers, not NaN or Infinity (DeepSpeed reads the file with hjson)"


@rule("AW015", "consumer-refuses-json", Severity.ERROR, fix=_STRICT_FIX)
def consumer_refuses_json(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Reads the DeepSpeed JSON with the reader of each library that consumes it on this run: `json.load` for
    accelerate (a YAML's `deepspeed_config_file`) and the HF Trainer (`--deepspeed`, TRL's recipes), hjson for
    DeepSpeed's own reader (the `deepspeed` launcher, `deepspeed.initialize(config=path)`), and reports a
    refusal in the reader's own words. A JSON checked alone is judged by every reader that may consume it; an
    Accelerate config named `*.json` by accelerate's loader, which reads it with `json.load` too.

    ## Why is this bad?
    DeepSpeed's own reader accepts `//` comments, trailing commas and a byte-order mark, so such a file looks
    valid, but accelerate and the Trainer open it with `json.load`: the run dies after the launch with a
    `JSONDecodeError` on every rank (e.g. "Expecting property name enclosed in double quotes").

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2,},}
    ```
    Use instead: no trailing commas.
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    """
    yield from _accelerate_config_refused(ctx)
    judged = _judged(ctx)
    if judged is None:
        return
    document, read = judged
    consumers = known_consumers(ctx)
    if consumers:
        refused = [c for c in consumers if not read[c.reader].accepted]
        if refused:
            verdict = read[refused[0].reader]
            fine = f"; fine for {CONSUMERS['deepspeed'].label}, which reads it with hjson" \
                if read["hjson"].accepted else ""
            yield Finding("deepspeed", _nearest_key(document, verdict),
                          f"{_said(ctx, refused, verdict)}; the run stops there{fine}")
        return
    strict, lenient = read["json.load"], read["hjson"]
    if not strict.accepted and not lenient.accepted:
        yield Finding("deepspeed", _nearest_key(document, strict),
                      f"no library reads it: {_said(ctx, _HF, strict)}; {_said(ctx, _DEEPSPEED, lenient)}")


def _accelerate_config_refused(ctx: CheckContext) -> Iterator[Finding]:
    """An Accelerate config named `*.json`: `load_config_from_file` (accelerate/commands/config/config_args.py)
    reads it with `json.load` too (`ClusterConfig.from_json_file`)."""
    document = ctx.accelerate
    strict = verdicts(document).get("json.load") if document is not None else None
    if strict is not None and not strict.accepted:
        yield Finding("accelerate", _nearest_key(document, strict),
                      f"accelerate's config loader reads it with json.load: {strict.describe()}; the launch stops "
                      "there")


@rule("AW016", "json-readers-disagree", Severity.WARNING, fix=_STRICT_FIX)
def json_readers_disagree(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    For a DeepSpeed JSON checked alone (no YAML, no Trainer arguments, no `"auto"` that says who reads it),
    says which of the libraries that may consume it accept it and which refuse it: accelerate and the HF
    Trainer read it with `json.load`, DeepSpeed's own reader with hjson.

    ## Why is this bad?
    The file works on one path and dies on another: `//` comments and trailing commas are fine for the
    `deepspeed` launcher but refused by accelerate and the Trainer; `NaN` is read by `json.load` but not by
    hjson. The same JSON is often reused across launchers.

    ## Example
    ```json
    {
      // ZeRO-2
      "train_micro_batch_size_per_gpu": 4,
      "zero_optimization": {"stage": 2}
    }
    ```
    Use instead: no comments (keep notes beside the file).
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```
    """
    judged = _judged(ctx)
    if judged is None or known_consumers(ctx):
        return
    document, read = judged
    strict, lenient = read["json.load"], read["hjson"]
    if strict.accepted == lenient.accepted or duplicate_refusal(lenient):
        return  # all agree, or the one refusal is DeepSpeed's duplicate keys (AW013 names them)
    if strict.accepted:
        yield Finding("deepspeed", _nearest_key(document, lenient),
                      f"fine for accelerate and the HF Trainer (json.load); {_refused_by(ctx, _DEEPSPEED, lenient)}",
                      fix=_LENIENT_FIX)
    else:
        yield Finding("deepspeed", _nearest_key(document, strict),
                      f"fine for {CONSUMERS['deepspeed'].label}, which reads it with hjson; "
                      f"{_refused_by(ctx, _HF, strict)}")
