"""The model a trace runs (trace.py): its transformers config, built on the meta device, made of fake tensors.

A preset is turned back into the config.json it was reduced from; a config.json or a hub id's is read as
written. The traced config follows the depth asked for, turns off the attention dropout CUDA's kernels would
not save (trace.py's docstring, 1), and picks sdpa or eager; the model gets checkpointing and PEFT's LoRA as the
run would, and its parameters become fake cpu tensors in the precision the run keeps them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelwiz.errors import InputError, UsageError

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.estimate.trace import TraceSettings


def hf_config_for(spec: ModelSpec) -> Any:
    """The transformers config of `spec`: its own config.json when it came from one, else built from its fields."""
    import json
    import re
    from pathlib import Path

    raw = None
    hub = re.search(r"\(config\.json from (.+)\)$", spec.source)  # models.py's source line of a hub id
    path = Path(hub.group(1)) if hub else Path(spec.source)
    if path.suffix == ".json" and path.is_file():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read {path}: {exc}", hint="pass a HF config.json") from None
    if not isinstance(raw, dict):
        raw = _config_dict_from_spec(spec)
    return config_from_dict(dict(raw), source=spec.source or spec.name)


def config_from_dict(raw: dict[str, Any], *, source: str) -> Any:
    """A transformers PretrainedConfig from a config.json dict; any failure is one InputError line."""
    from transformers import AutoConfig

    model_type = raw.pop("model_type", None)
    if not isinstance(model_type, str):
        raise InputError(f"{source}: no model_type", hint="pass a HF config.json with its model_type")
    try:
        return AutoConfig.for_model(model_type, **raw)
    except Exception as exc:  # noqa: BLE001 - config classes validate with any exception type
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(f"transformers cannot build `{model_type}` from {source}: {reason}",
                         hint="pass a complete config.json of a model type this transformers knows") from None


def _config_dict_from_spec(spec: ModelSpec) -> dict[str, Any]:
    """A config.json for a preset (the presets are HF configs reduced to the fields the formulas need)."""
    if spec.parameters_override is not None:
        raise UsageError("--trace needs a model, not a parameter count", hint="pass --model NAME or a config.json")
    if spec.family == "gpt2":
        return {
            "model_type": "gpt2", "vocab_size": spec.vocab_size, "n_embd": spec.hidden_size,
            "n_layer": spec.num_layers, "n_head": spec.num_heads, "n_inner": spec.intermediate_size,
            "n_positions": spec.max_position_embeddings,
        }
    if not spec.causal_lm:
        raise UsageError("--trace traces causal language models; BERT is an encoder",
                         hint="estimate BERT without --trace")
    raw: dict[str, Any] = {
        "model_type": spec.family, "vocab_size": spec.vocab_size, "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size, "num_hidden_layers": spec.num_layers,
        "num_attention_heads": spec.num_heads, "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim, "tie_word_embeddings": spec.tie_word_embeddings,
        "max_position_embeddings": spec.max_position_embeddings,
    }
    if spec.num_experts > 1:
        raw.update(num_local_experts=spec.num_experts, num_experts_per_tok=spec.experts_per_token)
    if spec.family == "llama" and spec.attention_bias:
        raw["attention_bias"] = True
    return raw


def layer_count_key(config: Any) -> str:
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(getattr(config, key, None), int):
            return key
    raise InputError(f"{config.model_type}: no layer count in its config", hint="pass a causal LM config.json")


def prepare_config(config: Any, settings: TraceSettings, layers: int) -> Any:
    import copy

    config = copy.deepcopy(config)
    setattr(config, layer_count_key(config), layers)
    for key in ("layer_types", "mlp_layer_types"):  # per-layer lists (Gemma-3, Qwen3) follow the depth
        value = getattr(config, key, None)
        if isinstance(value, list) and len(value) > layers:
            setattr(config, key, value[:layers])
    if settings.attention != "eager":  # see the module docstring, 1: CUDA's kernels save no dropout mask
        for key in ("attention_dropout", "attn_pdrop"):
            if hasattr(config, key):
                setattr(config, key, 0.0)
        if getattr(config, "attn_logit_softcapping", None) is not None:  # Gemma-2: sdpa has no softcap
            config.attn_logit_softcapping = None
    config._attn_implementation = "eager" if settings.attention == "eager" else "sdpa"
    config.use_cache = False
    return config


def build_model(config: Any, settings: TraceSettings) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    try:
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, attn_implementation=config._attn_implementation)
    except Exception as exc:  # noqa: BLE001 - transformers raises anything from a bad config (even asserts)
        reason = str(exc).splitlines()[0].split(". ")[0][:200] if str(exc) else type(exc).__name__
        hint = "pass the config.json of a decoder (causal) language model"
        if "attention implementation" in reason:  # e.g. Gemma-2 has no sdpa path in transformers 5
            hint = "trace with --attention eager"
        raise InputError(f"transformers cannot build a causal LM from this config: {reason}", hint=hint) from None
    if settings.gradient_checkpointing:
        enable = getattr(model, "activation_checkpointing_enable", None)  # transformers 5's new name
        if enable is not None:
            enable()  # non-reentrant by default
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if settings.lora_rank is not None:
        from peft import LoraConfig, get_peft_model

        targets = list(settings.lora_targets) or "all-linear"
        lora = LoraConfig(r=settings.lora_rank, lora_alpha=2 * settings.lora_rank,
                          lora_dropout=settings.lora_dropout,
                          target_modules=targets, task_type="CAUSAL_LM")
        model = get_peft_model(model, lora, autocast_adapter_dtype=False)
    model.train()
    return model


def materialise(model: Any, fake_mode: Any, settings: TraceSettings) -> None:
    """Replace meta parameters and buffers by fake cpu tensors; a tied parameter stays one tensor."""
    import torch

    compute = torch.bfloat16 if settings.autocast_dtype == "bf16" else torch.float16
    if settings.precision == "fp32":
        frozen = trainable = torch.float32
    elif settings.precision == "bf16":  # PEFT's fp32 adapters over the bf16 base where it keeps them so
        frozen, trainable = torch.bfloat16, (torch.float32 if settings.fp32_adapters else torch.bfloat16)
    else:  # mixed: fp32 trainable parameters under autocast; a LoRA base is loaded in 16-bit
        frozen, trainable = (compute if settings.lora_rank is not None else torch.float32), torch.float32
    done: dict[int, torch.nn.Parameter] = {}
    with fake_mode:
        for module in model.modules():
            for name, param in list(module._parameters.items()):
                if param is None:
                    continue
                if id(param) not in done:
                    dtype = (trainable if param.requires_grad else frozen) if param.is_floating_point() else param.dtype
                    done[id(param)] = torch.nn.Parameter(
                        torch.empty(param.shape, dtype=dtype, device="cpu"), requires_grad=param.requires_grad
                    )
                module._parameters[name] = done[id(param)]
            for name, buffer in list(module._buffers.items()):
                if buffer is not None:
                    module._buffers[name] = torch.zeros(buffer.shape, dtype=buffer.dtype, device="cpu")
