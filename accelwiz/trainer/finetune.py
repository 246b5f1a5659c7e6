"""Fine-tuning methods: full, LoRA through peft, QLoRA (a 4-bit base through bitsandbytes plus LoRA).

`qlora_unsupported_reason` asks the installed bitsandbytes to quantize a tensor on this machine's device, so a
refusal says what actually failed rather than assuming that 4-bit needs CUDA (bitsandbytes 0.50.2, the version
tested here, quantizes and trains 4-bit layers on a CPU; older versions, or builds without that backend, do not).
"""

from __future__ import annotations

from typing import Any

# LoRA targets when neither the plan nor --lora-targets names them: the attention projections, by the names
# Llama-, Mistral-, Qwen-style (q_proj...), GPT-2 (c_attn) and GPT-NeoX/Falcon (query_key_value) models use.
DEFAULT_TARGET_SETS = (("q_proj", "k_proj", "v_proj", "o_proj"), ("c_attn",), ("query_key_value",))


class MethodError(ValueError):
    """A fine-tuning method this model or machine cannot run; `hint` says what to do instead."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


def qlora_unsupported_reason() -> str | None:
    """Why QLoRA cannot run here, or None when bitsandbytes really quantizes to 4 bits on this device."""
    try:
        import bitsandbytes  # noqa: F401 - imported to learn whether it is there
    except ImportError:
        return "QLoRA needs bitsandbytes, which is not installed"
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        import bitsandbytes as bnb
        from bitsandbytes.functional import dequantize_4bit, quantize_4bit

        weights = torch.randn(64, 64, device=device)
        packed, state = quantize_4bit(weights, quant_type="nf4")
        error = (dequantize_4bit(packed, state) - weights).abs().mean().item()
    except Exception as exc:  # noqa: BLE001 - any failure of the probe means "not on this machine"
        version = getattr(locals().get("bnb"), "__version__", "?")
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"bitsandbytes {version} cannot quantize to 4 bits on this machine's {device}: {first}"
    if not error < 0.5:  # NF4 of N(0, 1) values is off by ~0.1 on average; more means a broken kernel
        return f"bitsandbytes {bnb.__version__} 4-bit quantization on {device} is wrong (mean error {error:.2f})"
    return None


def quantization_config() -> Any:
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_compute_dtype=torch.bfloat16 if torch.cuda.is_available() else torch.float32)


# PEFT's shorthand for "every linear layer but the output head" (peft.utils.constants.INCLUDE_LINEAR_LAYERS_SHORTHAND);
# `accelwiz init` writes it in the plan as `lora_targets: [all-linear]`, and the estimator counts it that way.
ALL_LINEAR = "all-linear"


def is_all_linear(name: str) -> bool:
    """The plan's and the flag's spellings of PEFT's shorthand: all-linear, all_linear, any case."""
    return name.strip().lower().replace("_", "-") == ALL_LINEAR


def lora_targets(model: Any, wanted: list[str] | None) -> list[str] | str:
    """The module names LoRA adapts: the plan's or the flag's (each must exist), else the attention projections.

    `all-linear` alone is handed to peft as the string "all-linear", which peft expands itself (every nn.Linear
    or Conv1D except the output embeddings); beside other names it is expanded the same way here, by leaf name.
    """
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    if wanted:
        if all(is_all_linear(t) for t in wanted):
            return ALL_LINEAR
        expanded = [n for t in wanted for n in (sorted(_linear_names(model, head=False)) if is_all_linear(t) else [t])]
        wanted = list(dict.fromkeys(expanded))
        missing = [t for t in wanted if t not in names]
        if missing:
            raise MethodError(f"LoRA target module(s) {', '.join(missing)} not in the model",
                              hint=f"pick from its linear layers, e.g. {', '.join(sorted(_linear_names(model))[:6])}"
                                   f", or {ALL_LINEAR}")
        return wanted
    for candidates in DEFAULT_TARGET_SETS:
        if all(c in names for c in candidates):
            return list(candidates)
    raise MethodError("cannot tell which modules LoRA should adapt in this model",
                      hint=f"name them with --lora-targets (or lora_targets in the plan), or pass {ALL_LINEAR}")


def _linear_names(model: Any, *, head: bool = True) -> set[str]:
    """Leaf names of the linear layers; without `head`, not the output embeddings (as peft's all-linear)."""
    import torch

    output = model.get_output_embeddings() if not head and hasattr(model, "get_output_embeddings") else None
    return {n.rsplit(".", 1)[-1] for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and m is not output}


def lora_base_dtype(accelerator: Any, method: str) -> Any:
    """The dtype LoRA's frozen base is loaded in: the run's 16-bit compute dtype under bf16/fp16 mixed precision
    (as LoRA recipes load it, `from_pretrained(torch_dtype=bfloat16)`, and as the estimate counts it: 2 B per
    frozen parameter). An fp32 base doubled the frozen weights against the plan's estimate: 620 MB allocated
    where 314 MB were estimated for a 78M-parameter checkpoint on an H200. PEFT keeps the adapters in fp32
    (`get_peft_model(autocast_adapter_dtype=True)`), which the mixed-precision step and its scaler need. None
    (fp32) without mixed precision, and under FSDP, whose units flatten parameters of one dtype.
    """
    import torch
    from accelerate.utils import DistributedType

    if method != "lora" or accelerator.distributed_type == DistributedType.FSDP:
        return None
    return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(str(accelerator.mixed_precision))


def apply_method(model: Any, method: str, rank: int, alpha: int, targets: list[str] | None,
                 gradient_checkpointing: bool, dropout: float = 0.0, modules_to_save: list[str] | None = None) -> Any:
    """The model ready to train: gradient checkpointing as asked, and LoRA adapters for lora/qlora, with PEFT's
    trainable copies of `modules_to_save` (`upcast_saved_copies`)."""
    if method == "qlora":
        from peft import prepare_model_for_kbit_training

        # Casts the non-quantized parameters to fp32 and enables input gradients (needed with checkpointing).
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing,
                                                gradient_checkpointing_kwargs={"use_reentrant": False})
    elif gradient_checkpointing:
        # Non-reentrant checkpointing lets gradients reach LoRA adapters even though the embeddings are frozen.
        # transformers 5.24 renamed it (the old name warns it goes in v6); older ones lack the new name.
        enable = getattr(model, "activation_checkpointing_enable", None)
        if enable is not None:
            enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if gradient_checkpointing:
        model.config.use_cache = False  # a KV cache is useless in training and conflicts with recomputation
    if method == "full":
        return model
    from peft import LoraConfig, get_peft_model

    # a new list: PEFT appends to the one it is given (the embedding's full name, under ensure_weight_tying)
    config = LoraConfig(r=rank, lora_alpha=alpha, target_modules=lora_targets(model, targets), lora_dropout=dropout,
                        bias="none", task_type="CAUSAL_LM", modules_to_save=list(modules_to_save or []) or None)
    return upcast_saved_copies(get_peft_model(model, config))


def upcast_saved_copies(model: Any) -> Any:
    """PEFT copies each of modules_to_save in its original's dtype; an fp16 copy is made fp32, as PEFT makes its
    adapters (`autocast_adapter_dtype`): fp16 mixed precision's GradScaler refuses to unscale fp16 gradients.
    A bf16 copy trains in bf16, as a Trainer script's does (estimate/modules_to_save.py `saved_width`, which
    counts the copy in its original's dtype: the fp16 upcast is not told apart from bf16 there)."""
    import torch

    for name, parameter in model.named_parameters():
        if ".modules_to_save." in name and parameter.requires_grad and parameter.dtype == torch.float16:
            parameter.data = parameter.data.to(torch.float32)
    return model


def parameter_counts(model: Any) -> tuple[int, int]:
    """(total, trainable) parameters, counting a 4-bit weight by its elements, not its packed bytes, and a
    ZeRO-3 partitioned one (loaded inside `zero.Init`) by its full size, not this rank's shard."""
    total = trainable = 0
    for parameter in model.parameters():
        count = getattr(parameter, "ds_numel", None) or parameter.numel()
        if hasattr(parameter, "quant_state") and getattr(parameter, "quant_state", None) is not None:
            count = int(parameter.quant_state.shape.numel())  # Params4bit stores two values per byte
        total += count
        trainable += count if parameter.requires_grad else 0
    return total, trainable
