"""AW316: the FSDP wrap class against the model: a class the model does not have stops `prepare`."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.fsdp import _entry, fsdp_view
from accelwiz.rules.rule import Needs, rule


@rule("AW316", "fsdp-wrap-class-not-in-model", Severity.ERROR, needs=Needs.WORKLOAD,
      fix="Name the model's own block class (its `_no_split_modules`), or leave fsdp_transformer_layer_cls_to_wrap "
          "out so accelerate takes `_no_split_modules`")
def fsdp_wrap_class_not_in_model(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With `fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP`, compares each class in
    `fsdp_transformer_layer_cls_to_wrap` with the classes of the model (`--model`, or the plan's), built on
    the meta device, and suggests the closest of its `_no_split_modules` and module classes.

    ## Why is this bad?
    accelerate looks each name up among the model's module classes (`get_module_class_from_name`) when it
    prepares the model and raises "Could not find the transformer layer class BertLayer in the model" (FSDP1:
    `FullyShardedDataParallelPlugin.set_auto_wrap_policy`; FSDP2: `fsdp2_prepare_auto_wrap_policy`), on every
    rank, after the model is loaded; older releases silently wrapped nothing, leaving one FSDP unit. A config
    copied from a BERT recipe onto an XLM-RoBERTa model names `BertLayer`; the list is split on commas without
    stripping, so `LlamaDecoderLayer, LlamaMLP` looks for " LlamaMLP".

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml --model xlm-roberta-base.json
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
      fsdp_transformer_layer_cls_to_wrap: BertLayer
    ```
    ```json xlm-roberta-base.json
    {"model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"], "hidden_size": 768,
     "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 250002,
     "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1}
    ```
    Use instead: `fsdp_transformer_layer_cls_to_wrap: XLMRobertaLayer`.
    ```yaml
    # accelwiz check accelerate.yaml --model xlm-roberta-base.json
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
      fsdp_transformer_layer_cls_to_wrap: XLMRobertaLayer
    ```
    """
    written = _transformer_wrap_classes(ctx)
    spec = getattr(ctx.workload, "model", None)
    if written is None or spec is None or spec.parameters_override is not None:  # a bare count borrows a shape
        return
    if (modules := _model_modules(spec)) is None:
        return
    # the launcher exports str(value) and the plugin splits it on "," as written (utils/dataclasses.py)
    missing = [name for name in str(written[1]).split(",") if name not in modules.class_names]
    if missing:
        yield Finding("accelerate" if written[0] else None, written[0], _missing_message(spec, modules, missing))


def _transformer_wrap_classes(ctx: CheckContext) -> tuple | None:
    """The (path, value) of the class names wrapped under TRANSFORMER_BASED_WRAP; None under another policy."""
    view = fsdp_view(ctx)
    policy = _entry(ctx, "fsdp_auto_wrap_policy") if view else None
    written = _entry(ctx, "fsdp_transformer_layer_cls_to_wrap") if view else None
    trainer = _trainer_classes(ctx, view)
    if trainer is not None:  # the Trainer's plugin: its policy, its class names (or, unset, the launcher's)
        policy = ((), view.fsdp_auto_wrap_policy.value)
        written = ((), trainer) if trainer else written
    if policy is None or written is None or written[1] is None:
        return None
    if not isinstance(policy[1], str) or policy[1].upper() != "TRANSFORMER_BASED_WRAP":
        return None
    return written


def _model_modules(spec: object) -> object | None:
    """The model's module classes, built on the meta device (None where its family cannot be built)."""
    from accelwiz.rules.model_modules import model_modules

    return model_modules(spec.family)


def _missing_message(spec: object, modules: object, missing: list[str]) -> str:
    """The finding's text: the missing names, the model's class, its _no_split_modules and the closest match."""
    wanted = list(dict.fromkeys(modules.no_split_modules)) or sorted(modules.class_names)
    close = difflib.get_close_matches(missing[0].strip(), [*wanted, *sorted(modules.class_names)], n=2, cutoff=0.4)
    suggestion = f"; did you mean {' or '.join(f'`{c}`' for c in dict.fromkeys(close))}?" if close else ""
    return (f"{', '.join(repr(m) for m in missing)} is not a module class of {spec.name} "
            f"({modules.model_class}): accelerate raises 'Could not find the transformer layer class' at "
            f"prepare; its _no_split_modules are {', '.join(modules.no_split_modules) or 'none'}{suggestion}")


def _trainer_classes(ctx: CheckContext, view: object) -> str | None:
    """With the Trainer's --fsdp: the class names its plugin passes ("" when it passes none); None otherwise."""
    if view is None or view.fsdp_auto_wrap_policy.source != "trainer":
        return None
    from accelwiz.rules.trainer_fsdp import trainer_fsdp_of

    fsdp = trainer_fsdp_of(ctx)
    return fsdp.plugin.get("transformer_cls_names_to_wrap", "") if fsdp is not None else None
