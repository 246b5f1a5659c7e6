"""PEFT's `modules_to_save`: whole modules trained beside LoRA's adapters, the second trainable group.

What PEFT does (peft 0.21 utils/other.py `ModulesToSaveWrapper.update`, unchanged since 0.10's): each module whose
name ends with a listed name (`_set_trainable`: `key.endswith(target_key)`, a plain string suffix) is wrapped, its
original frozen and a `copy.deepcopy` of it made trainable. So its weights count twice (the original, frozen, in the
base; the copy in the original's dtype: after prepare_model_for_kbit_training fp32), and it has gradients and
optimizer states of its own, in its own dtype: PEFT's `autocast_adapter_dtype` upcasts only the adapters, so over a
bf16 base the copy trains in bf16 beside fp32 adapters (measured in tests/estimate/test_modules_to_save.py).

Tied embeddings: a tied LM head is the embedding's weight; its copy is a new tensor, so naming `lm_head` (or
`embed_tokens`, or both) unties the pair, one trainable copy per name, each vocab x hidden (PEFT warns; only
`LoraConfig(ensure_weight_tying=True)` makes one shared copy, which accelwiz's trainer does not ask for).

Under an engine the copy is a trainable parameter like the adapters: DeepSpeed casts it to the compute dtype and
keeps its fp32 master and states (the widths of every trainable parameter there, states.py); accelerate's FSDP
upcasts every trainable 16-bit parameter to fp32 when mixed precision is on (1.16 `fsdp2_prepare_model`; FSDP1's
flat parameters in `prepare_model`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.modelspec.spec import ModelSpec

# the LM head's module name where it is tied: ModelSpec.tensors() omits it (it shares the embedding's weight)
_TIED_HEAD = "lm_head"
# the module names TRL 0.7.5-0.25's SFTTrainer casts back to bf16 after a k-bit preparation (workload.py)
_TRL_CAST = ("lm_head", "embed_tokens", "wte", "wpe")


def saved_parameters(spec: ModelSpec, names: tuple[str, ...]) -> int:
    """Parameters of the trainable copies PEFT makes for `names` (`_copied_shapes`), at the count --params gives."""
    return spec.scaled(sum(math.prod(shape) for shape in _copied_shapes(spec, names)))


def check_modules_to_save(spec: ModelSpec, names: tuple[str, ...] | list[str], regime: str) -> None:
    """Every name is a module of this model, none is a 4-bit QLoRA linear (bitsandbytes' packed weight has no
    gradient); UsageError with the candidates otherwise."""
    names = tuple(names)
    unknown = [n for n in names if not _matched_modules(spec, (n,))
               and not (spec.tied_lm_head and _ends_with(_TIED_HEAD, n))]
    if unknown:
        outside = sorted({t.module for t in spec.tensors() if not t.module.startswith("layers.")}
                         | ({_TIED_HEAD} if spec.tied_lm_head else set()))
        raise UsageError(f"--lora-modules-to-save {', '.join(unknown)}: no module of {spec.name} ends with that name",
                         hint=f"its modules outside the blocks are {', '.join(outside)} (PEFT matches a name's end)")
    if regime == "qlora":
        quantized = {t.module for t in spec.all_block_linears()}
        hit = sorted({m for m in _matched_modules(spec, names) for q in quantized if _inside(q, m)})
        if hit:
            more = f" and {len(hit) - 3} more" if len(hit) > 3 else ""
            raise UsageError(f"--lora-modules-to-save: {', '.join(hit[:3])}{more} hold 4-bit weights under QLoRA, "
                             "which cannot train", hint="name modules outside the blocks (embed_tokens, lm_head), "
                                                        "or use --lora")


def saved_width(workload: Workload, strategy: Strategy, loaded: int) -> int:
    """Bytes per parameter of the trainable copies, their gradients' too: `loaded`, their original's dtype as the
    run loads it (frozen_base.py `frozen_base_width`: the built-in trainer's 16-bit LoRA base under mixed precision, a
    script's load, fp32 after a k-bit preparation, DeepSpeed's compute dtype, whose fp32 master and states are
    counted as every trainable parameter's); fp32 where accelerate's FSDP upcasts every trainable 16-bit
    parameter under mixed precision; bf16 where TRL casts them back. (accelwiz's trainer upcasts an fp16 copy for
    the GradScaler, trainer/finetune.py: "mixed" does not tell fp16 from bf16, so that copy is counted at 2 B.)"""
    if strategy.is_fsdp and strategy.fsdp_upcast and workload.precision != "fp32":
        return 4
    if workload.trl_bf16_cast_parameters and all(any(m in n for m in _TRL_CAST) for n in workload.modules_to_save):
        return 2  # TRL's peft_module_casting_to_bf16 matches the copies' names too (...lm_head.modules_to_save...)
    return loaded


def saved_weight_bytes(workload: Workload, strategy: Strategy, width: int) -> float:
    """The copies' bytes at `width` (`saved_width`) outside DeepSpeed, whose cast and master copy treat them as
    every trainable parameter (states.py); their gradients' too."""
    if not workload.saved_parameters or strategy.is_deepspeed:
        return 0.0
    return float(width * workload.saved_parameters)


def foreach_temporary_bytes(workload: Workload, width: int, copies: int) -> float:
    """torch AdamW's foreach temporary (`_foreach_sqrt` of the second moments, step_temporaries.py), unsharded,
    `width` bytes per adapter (or parameter) and `copies` per saved copy's: the step groups tensors by dtype
    (`_group_tensors_by_device_and_dtype`) and the first group's temporary is still referenced while the next
    group's is made (torch 2.13 optim/adam.py `_multi_tensor_adam` has no `del exp_avg_sq_sqrt`): the sum."""
    saved = workload.saved_parameters
    return float(width * (workload.trainable_parameters - saved) + copies * saved)


def trained_head_input_width(workload: Workload) -> int:
    """Bytes per hidden element per token the LM head's input adds where its copy trains beside a frozen final
    norm: the head keeps its input for the weight's gradient, in the compute dtype (autocast's 16-bit cast, an
    fp32 run's fp32). Measured on the real PEFT model's saved tensors (tests/estimate/test_modules_to_save.py):
    +2 sbh in bf16 and under autocast, +4 sbh in fp32. A saved embedding adds nothing counted: it makes the
    first layer's input need a gradient, so that layer keeps what the others do, which activations.py already
    counts for every layer (activations_lora.py: "the first layer ... keeps less", not counted)."""
    if not any(_ends_with(head, n) for head in ("lm_head", "embed_out") for n in workload.modules_to_save):
        return 0
    return workload.compute_width


def saved_factored_elements(workload: Workload) -> int:
    """Adafactor's factored second moment of the copies: rows + cols per matrix, n per vector."""
    shapes = _copied_shapes(workload.model, workload.modules_to_save) if workload.saved_parameters else []
    return workload.model.scaled(sum(sum(shape) if len(shape) == 2 else math.prod(shape) for shape in shapes))


def saved_notes(workload: Workload, width: int) -> list[str]:
    """The assumption line: what was counted for the copies, `width` bytes each (none without any)."""
    saved = workload.saved_parameters
    if not saved:
        return []
    spec, embeddings = workload.model, ("embed_tokens", "wte", "word_embeddings", "embed_in")
    untied = spec.tied_lm_head and any(_ends_with(_TIED_HEAD, n) or any(
        m.rsplit(".", 1)[-1] in embeddings for m in _matched_modules(spec, (n,))) for n in workload.modules_to_save)
    tied = " (the tied embedding and LM head are untied: one copy per name, as PEFT without ensure_weight_tying)" \
        if untied else ""
    return [f"modules_to_save {', '.join(workload.modules_to_save)}: {saved:,} parameters trained as a copy beside the "
            f"frozen original ({width} B/param, the original's dtype as the engine holds it), with gradients and "
            "optimizer states of their own" + tied]


def _copied_shapes(spec: ModelSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """The shape of every parameter PEFT copies for `names`: those of each module whose path ends with a name (the
    outermost one where a module and its child both match: the child is inside the parent's copy), and a tied LM
    head's, the embedding's vocab x width (ModelSpec.tensors() omits it)."""
    if not names:
        return []
    matched = _matched_modules(spec, names)
    shapes = [tuple(t.shape) for t in spec.tensors() if any(_inside(t.module, m) for m in matched)]
    if spec.tied_lm_head and any(_ends_with(_TIED_HEAD, n) for n in names):
        shapes.append((spec.vocab_size, spec.embedding_width))
    return shapes


def _matched_modules(spec: ModelSpec, names: tuple[str, ...]) -> list[str]:
    """The outermost module paths (ancestors of the parameter tensors' modules included) ending with a name."""
    paths: set[str] = set()
    for t in spec.tensors():
        parts = t.module.split(".")
        paths.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    matched = sorted(p for p in paths if any(_ends_with(p, n) for n in names))
    return [p for p in matched if not any(p != q and _inside(p, q) for q in matched)]


def _ends_with(path: str, name: str) -> bool:
    """PEFT's test on a full module path (`model.embed_tokens`, `lm_head`): a string suffix. The paths here
    drop the decoder's root (`model.`, `transformer.`), so a name that spells it is matched without it too."""
    return path.endswith(name) or ("." in name and path.endswith(name.split(".", 1)[1]))


def _inside(module: str, ancestor: str) -> bool:
    return module == ancestor or module.startswith(ancestor + ".")
