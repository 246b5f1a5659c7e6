"""Liger's fused linear cross-entropy (`Workload.loss_kernel` "liger"): the loss tail without the logits.

The HF Trainer's `use_liger_kernel=True` (transformers 5.25 trainer.py: `apply_liger_kernel(self.model,
self.args.liger_kernel_config)`, integrations/liger.py -> liger_kernel `_apply_liger_kernel_to_instance`) replaces a
supported causal LM's forward by Liger's `lce_forward`, which in training with labels never builds the
[tokens, vocab] logits: `LigerForCausalLMLoss` hands the final hidden states and `lm_head.weight` to
`LigerFusedLinearCrossEntropyFunction` (liger-kernel 0.8.2, src/liger_kernel/ops/fused_linear_cross_entropy.py).
Its forward (`fused_linear_cross_entropy_forward`) walks the N = batch x tokens rows in chunks of
`next_power_of_2(ceil(N / ceil(V / H)))` (lines 68-70), and for each chunk
* computes the chunk's logits `_input_chunk @ weight.t()` in the matmul's dtype (line 114; 16-bit under autocast,
  the kernel upcasts to fp32 inside itself since Liger#406: no fp32 copy) and overwrites them with their gradient
  in place (the Triton kernel, lines 163-197); the previous chunk's, still named `grad_logits_chunk` (line 212),
  are freed only when that name is rebound, so two chunks' logits are live from the second chunk on;
* writes the chunk's input gradient into `grad_input`, a [N, H] tensor like the input (lines 72, 231: the
  product is a [chunk, H] temporary);
* adds the chunk's lm_head gradient into `grad_weight`, zeros like the weight (line 77, when the head trains):
  in place through `addmm(out_dtype=float32)` for an fp32 gradient of 16-bit logits (lines 235-255: CUDA compute
  capability 8+, torch 2.8+), else `grad_weight += torch.mm(grad_logits.t(), _input_chunk).float()` (line 257): a
  [V, H] product in the logits' dtype and, for a 16-bit one, its fp32 copy.
The loss per row (`loss_1d`, fp32) and the label mask (bool) live through the loop. What forward saves for
backward is `grad_input` and `grad_weight` (lines 431-435); backward scales them in place (`element_mul_kernel`,
lines 292-336) and returns them: `grad_weight` is the lm_head's gradient, made in forward.

So the estimate counts (`fused_loss_bytes`): kept for backward `grad_input` (N·H in the hidden states' dtype: fp32
in fp32 training and under autocast over an fp32 residual stream, else 16-bit); in forward on top of it the
lm_head's gradient (V·H, when the head trains), the per-row loss and mask (5N), the chunk's logits (chunk·V) and
the largest of: the previous chunk's logits, the input-gradient product (chunk·H), and the gradient's temporaries
(6VH for a 16-bit head, the bf16 product and its fp32 copy; 4VH in fp32 training; an fp32 head under autocast takes
the addmm path, whose only temporary is the chunk's 16-bit input, chunk·H·2); at backward's start the lm_head's
gradient only, which AccumulateGrad then takes as the parameter's gradient without a copy. The test
(tests/estimate/test_fused_loss.py) runs this loop re-implemented in torch on the CPU (Liger is Triton: it does
not run there) under torch's MemTracker; the addmm path is CUDA's only (`aten::addmm.dtype_out` has no CPU kernel).

What else `use_liger_kernel` patches is not modelled: Liger's RMSNorm (ops/rms_norm.py line 657: saves its input,
weight and an fp32 rstd per row), SwiGLU (transformers/swiglu.py line 21, ops/swiglu.py line 262:
`LigerSiLUMulFunction` keeps gate and up, not act(gate): 2 bytes x intermediate less per token and layer than the
HF MLP activations.py counts) and RoPE change the per-layer activations; the estimate keeps transformers' layer
terms, which counts more than a Liger run keeps without checkpointing.

Refused (`refuse_fused_loss`): `--trace` (the trace runs the model's own loss); DPO/GRPO (TRL 1.16's DPOTrainer and
GRPOTrainer turn Liger's fused loss off and run their own fused LM head: resolution/loss_kernel.py); a 16-bit
`--loss-dtype` (Liger's loss is fp32 in its kernel); LoRA on lm_head (`lce_forward` reads `lm_head.weight`, the
frozen base under PEFT's lora.Linear: the adapter is skipped). A model type Liger has no fused loss for is refused
from a flag and left standard from Trainer arguments (resolved.py).

Not refused: ZeRO-3 with an untied lm_head. Liger reads `lm_head.weight` by attribute and the head's module never
runs, but `use_liger_kernel` patches the model's own forward, which runs inside the DeepSpeed engine's: its
prologue marks every module `_in_forward` (deepspeed 0.19.8 engine.py `_forward_prologue`), so the attribute read
gathers the weight and registers it as the model's external parameter (parameter_offload.py
`ZeROOrderedDict.__getitem__`), and the head trains (tests/estimate/test_liger_zero3_engine.py: a real ZeRO-3
engine on the CPU, the head partitioned to nothing, gathered whole inside the forward and moved by the step; read
after the forward it is empty and the loss fails, which is why TRL's DPO/GRPO Liger paths, computing the loss
outside the model's forward, needed trl#5891/#6372). Snowflake's ALST recipes train Llama-3.1-8B this way.
Liger-Kernel#1048 reports a size mismatch in backward for Qwen3-8B (transformers 4.51.3, Liger 0.5.10), worked
around by a `stage3_param_persistence_threshold` above the head's size: the estimate says so in a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

LOSS_KERNELS = ("standard", "liger", "trl-fused-head")

# HF model types whose Liger patch installs the fused loss by default: liger-kernel 0.8.2
# transformers/monkey_patch.py `MODEL_TYPE_TO_APPLY_LIGER_FN`, each `apply_liger_kernel_to_*` with
# `fused_linear_cross_entropy: bool = True` (granite defaults to False and pixtral has none: not listed)
LIGER_FUSED_LOSS_FAMILIES = frozenset({
    "deepseek_v4", "gemma", "gemma2", "gemma3_text", "gemma3", "gemma4_text", "gemma4", "glm4", "glm4v",
    "glm4v_moe", "gpt_oss", "internvl", "llama", "llama4_text", "llama4", "llava", "mllama", "mllama_text_model",
    "ministral", "mistral", "mixtral", "nemotron", "olmo2", "olmo3", "qwen2", "qwen3", "qwen3_moe", "qwen2_vl",
    "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text", "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
    "qwen3_5_moe_text", "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text", "smollm3", "phi3",
    "paligemma", "falcon_h1", "smolvlm", "hunyuan_v1_dense", "hunyuan_v1_moe", "exaone4",
})


@dataclass(frozen=True)
class FusedLoss:
    """Bytes of the fused loss: kept for backward, and on top of that at forward's and backward's start peaks."""

    kept: int
    forward: int
    backward: int


def chunk_rows(tokens: int, vocab: int, hidden: int) -> int:
    """Liger's chunk: `next_power_of_2(cdiv(BT, cdiv(V, H)))` rows (fused_linear_cross_entropy.py lines 68-69)."""
    factor = -(-vocab // hidden)
    rows = -(-tokens // factor)
    return 1 << (rows - 1).bit_length()


def fused_loss_bytes(workload: Workload, *, autocast: bool = False) -> FusedLoss:
    """What Liger's fused loss keeps and makes (module docstring); `autocast`: torch.autocast over fp32 weights.
    `workload` as its activations see it (activations.as_activations_run: prepared QLoRA without autocast is fp32)."""
    from accelwiz.estimate.layer_terms import fp32_stream

    spec = workload.model
    rows, hidden, vocab = workload.micro_batch * workload.seq_len, spec.hidden_size, spec.vocab_size
    fp32 = workload.precision == "fp32"
    hidden_width = 4 if fp32 or fp32_stream(workload, autocast) else 2
    logits_width = 4 if fp32 else 2
    chunk = min(chunk_rows(rows, vocab, hidden), rows)
    head = head_gradient_width(workload, autocast=autocast)
    gradient = head * vocab * hidden
    if head == 0:
        temporary = 0
    elif head == 4 and logits_width == 2:  # the addmm path: the chunk's fp32 input cast to 16 bits
        temporary = 2 * chunk * hidden if hidden_width == 4 else 0
    else:  # the [V, H] product, and its fp32 copy where it is 16-bit (`.float()` of fp32 is the same tensor)
        temporary = (logits_width + (4 if logits_width == 2 else 0)) * vocab * hidden
    logits = logits_width * chunk * vocab
    # from the second chunk on, its logits are made while the previous chunk's are still `grad_logits_chunk`
    overlap = logits if rows > chunk else 0
    forward = gradient + 5 * rows + logits + max(overlap, logits_width * chunk * hidden, temporary)
    return FusedLoss(hidden_width * rows * hidden, forward, gradient)


def head_gradient_width(workload: Workload, *, autocast: bool = False) -> int:
    """Bytes per element of `grad_weight` (zeros like the lm_head weight): 0 when the head is frozen (LoRA,
    QLoRA), 4 for fp32 weights (fp32 training, autocast), else 2 (bf16 weights, DeepSpeed's cast, FSDP's gather)."""
    if workload.regime != "full":
        return 0
    return 4 if workload.precision == "fp32" or (workload.precision == "mixed" and autocast) else 2


def fused_loss_note(workload: Workload, strategy: Strategy) -> str:
    """The loss tail's line in the estimate's assumptions."""
    rows = workload.micro_batch * workload.seq_len
    chunk = min(chunk_rows(rows, workload.model.vocab_size, workload.model.hidden_size), rows)
    head = "its lm_head gradient made in forward" if workload.regime == "full" else "no lm_head gradient (frozen)"
    return (f"loss tail: Liger's fused linear cross-entropy (use_liger_kernel), no [{rows} tokens x vocab "
            f"{workload.model.vocab_size:,}] logits: {chunk}-row chunks, the input gradient kept for backward, "
            f"{head}; Liger's RMSNorm/SwiGLU/RoPE counted as transformers' layers" + _zero3_head(workload, strategy))


def _zero3_head(workload: Workload, strategy: Strategy) -> str:
    """Under ZeRO-3 with an untied head: how the weight is gathered, and the one failure reported (docstring)."""
    if strategy.kind != "zero3" or workload.model.tied_lm_head:
        return ""
    return ("; under ZeRO-3 the untied lm_head weight Liger reads is gathered as the model's external parameter "
            "inside the engine's forward (Liger-Kernel#1048 reports a backward size mismatch on one stack, "
            "worked around by a stage3_param_persistence_threshold above the head's size)")


def refuse_fused_loss(workload: Workload, *, trace: bool = False, post_training: bool = False) -> None:
    """UsageError where a fused loss cannot run as asked (module docstring); `post_training`: TRL's DPO/GRPO,
    whose trainers run their own fused LM head."""
    if workload.loss_kernel == "standard":
        return
    flag = f"--loss-kernel {workload.loss_kernel}"
    if trace:
        raise UsageError(f"{flag} with --trace: the trace runs the model's own loss on the full logits",
                         hint="drop --trace, or --loss-kernel")
    if workload.loss_kernel == "trl-fused-head":  # what TRL's trainers run (trl_fused_head.py)
        return
    if post_training:  # DPO/GRPO: their fused LM head whatever is asked (resolution/loss_kernel.py)
        from accelwiz.resolution.liger_grpo import runs_liger_grpo
        from accelwiz.resolution.loss_kernel import trl_refuses_kernel

        if workload.loss_kernel == "liger" and runs_liger_grpo(workload.stack.trl):
            return  # GRPO on TRL 0.17-1.12: Liger's GRPO loss (estimate/liger_grpo.py); DPO's is refused earlier

        raise UsageError(f"{flag} with --kind dpo/grpo: {trl_refuses_kernel(workload.loss_kernel, None)}",
                         hint="drop --loss-kernel (TRL's fused LM head runs), or pass --kind sft")
    if workload.loss_dtype in ("bf16", "fp16"):
        raise UsageError(f"{flag} with --loss-dtype {workload.loss_dtype}: Liger's loss runs in fp32 inside its "
                         "kernel, on no logits tensor", hint="drop --loss-dtype")
    if workload.regime != "full" and "lm_head" in workload.lora_targets:
        raise UsageError(f"{flag} with LoRA on lm_head: Liger's lce_forward reads lm_head.weight, the frozen "
                         "base, so the adapter would not train", hint="drop lm_head from --lora-target, or "
                                                                      "--loss-kernel")
