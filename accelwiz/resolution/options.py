"""The workload flags from command-line options (`estimate`, `check --model`, `convert --model`), checked where they
are given; the estimator's Workload for them is `accelwiz.estimate.resolved.workload_from_options`."""

from __future__ import annotations

from typing import Any

from accelwiz.errors import UsageError
from accelwiz.resolution.sourced import BASE_DTYPE_FLAG
from accelwiz.resolution.workload import FLAG, Sourced

CHOICES: dict[str, tuple[str, ...]] = {
    "regime": ("full", "lora", "qlora"),
    "precision": ("fp32", "mixed", "bf16"),
    "optimizer": ("adamw", "adamw8bit", "sgd", "adafactor", "paged-adamw", "paged-adamw8bit"),
    "attention": ("eager", "sdpa", "flash"),
    # fp32: transformers' own loss; bf16/fp16: a loss on the 16-bit logits (estimate/loss_dtype.py)
    "loss_dtype": ("fp32", "bf16", "fp16"),
    # standard: the loss on the full logits; liger: Liger's fused linear cross-entropy (estimate/fused_loss.py)
    "loss_kernel": ("standard", "liger", "trl-fused-head"),
    # AdamW's step: foreach (torch.optim.AdamW's default on CUDA), fused (fused=True) or loop (one parameter at a
    # time: transformers' AdamW, the Trainer's adamw_hf default before 4.32, torch's before 2.0) (step_temporaries.py)
    "optimizer_kernel": ("foreach", "fused", "loop"),
    # LoRA/QLoRA's frozen base as a script loads it (from_pretrained's dtype): the built-in trainer's otherwise
    "base_dtype": ("fp32", "bf16", "fp16"),
}


def flags_from_options(*, micro_batch: int | None, seq_len: int | None, **more: Any) -> dict[str, Any]:
    """The options given (None: not given), checked, by the resolution's names (`regime` is `method`, the
    estimator's `mixed` precision is bf16 compute)."""
    if micro_batch is not None and micro_batch < 1:
        raise UsageError(f"micro-batch must be at least 1 (got {micro_batch})", hint="pass --micro-batch 1 or more")
    if seq_len is not None and seq_len < 1:
        raise UsageError(f"sequence length must be at least 1 (got {seq_len})", hint="pass --seq-len 2048")
    for key, allowed in CHOICES.items():
        if more.get(key) is not None and more[key] not in allowed:
            raise UsageError(f"invalid {key} `{more[key]}`", hint=f"choose one of {', '.join(allowed)}")
    if more.get("lora_rank") is not None and more["lora_rank"] < 1:
        raise UsageError(f"LoRA rank must be at least 1 (got {more['lora_rank']})", hint="pass --lora-rank 16")
    dropout = more.get("lora_dropout")
    if dropout is not None and not 0.0 <= dropout < 1.0:
        raise UsageError(f"LoRA dropout must be at least 0 and below 1 (got {dropout})", hint="pass --lora-dropout 0.1")
    kernel, optimizer = more.get("optimizer_kernel"), more.get("optimizer")
    if kernel is not None and optimizer not in (None, "adamw"):
        raise UsageError(f"--optimizer-kernel {kernel} with --optimizer {optimizer}: foreach, fused and loop are "
                         "AdamW's kernels", hint="drop --optimizer-kernel, or pass --optimizer adamw")
    if more.get("stack"):  # --stack NAME==VERSION, refused in one line where malformed (resolution/stack.py)
        from accelwiz.resolution.stack import resolved_stack

        more["stack"] = resolved_stack(tuple(more["stack"]))
    if "kbit_prepare" in more:  # the flag says what to do; the workload records whether it was done
        more["kbit_prepared"] = more.pop("kbit_prepare")
    base = more.pop("base_dtype", None)
    flags = {"micro_batch": micro_batch, "seq_len": seq_len, "method": more.pop("regime", None), **more}
    given = flags.get("precision")
    if given is not None:  # the estimator's words, as compute and load dtypes: each reaches it unchanged
        compute, weights = PRECISION_FLAG[given]
        flags["precision"] = Sourced(compute, FLAG, f"--precision {given}")
        flags["weights_dtype"] = Sourced(weights, FLAG, f"--precision {given}")
    if base is not None:  # the frozen base as loaded, which --precision's weights do not say for LoRA
        flags["weights_dtype"] = Sourced(base, BASE_DTYPE_FLAG, "LoRA's frozen base as the script loads it")
    return flags


# --precision: (compute dtype, the weights' loaded dtype). mixed = 16-bit compute under autocast over fp32
# weights (an fp32 master); bf16 = weights loaded in bf16, gradients and torch AdamW's states in bf16
PRECISION_FLAG = {"fp32": ("fp32", "fp32"), "mixed": ("bf16", "fp32"), "bf16": ("bf16", "bf16")}
