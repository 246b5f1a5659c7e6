"""What is being trained and how: the model, the batch shape, the regime (full, LoRA, QLoRA), the numerics."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from accelwiz.errors import UsageError
from accelwiz.modelspec.peft_moe import MoeTargets
from accelwiz.modelspec.spec import OUTSIDE_BLOCK_TARGETS, ModelSpec
from accelwiz.resolution.stack import Stack

Regime = Literal["full", "lora", "qlora"]
Precision = Literal["fp32", "mixed", "bf16"]
Optimizer = Literal["adamw", "adamw8bit", "sgd", "adafactor", "paged-adamw", "paged-adamw8bit"]
Attention = Literal["eager", "sdpa", "flash"]

# the first bitsandbytes whose 4-bit matmul no longer keeps its input (`Workload.keeps_4bit_inputs`)
BNB_DROPS_4BIT_INPUT = (0, 43, 2)
# TRL versions whose SFTTrainer casts a k-bit-prepared model's embedding and LM head back to bf16
# (f100ca34c, first in v0.7.5; gone from SFT with v0.26.0, which no longer prepares the model)
TRL_CASTS_EMBEDDINGS: tuple[tuple[int, int, int], tuple[int, int, int]] = ((0, 7, 5), (0, 26, 0))

# The QLoRA paper's choice and the common PEFT recipe: every linear layer inside the blocks ("all-linear"),
# named per architecture family. PEFT's own default for Llama is only q_proj and v_proj.
ALL_LINEAR = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "qkv_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
    "gate_up_proj",
    "w1",
    "w2",
    "w3",
    "c_attn",
    "c_proj",
    "c_fc",
    "query",
    "key",
    "value",
    "dense",
    # the remote-code families' own module names (modelspec/remote_code.py): ChatGLM, Baichuan2, InternLM2
    "query_key_value",
    "dense_h_to_4h",
    "dense_4h_to_h",
    "W_pack",
    "wqkv",
    "wo",
)


@dataclass(frozen=True)
class Workload:
    model: ModelSpec
    micro_batch: int = 1
    # micro-batches per optimizer step: their gradients stay live across them (estimate/accumulation.py)
    gradient_accumulation: int = 1
    seq_len: int = 2048
    regime: Regime = "full"
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ALL_LINEAR
    # PEFT's LoraConfig.lora_dropout (default 0.0: an nn.Identity); above 0 each adapted linear keeps a dropout
    # mask and its dropped input for backward (activations.lora_dropout_bytes)
    lora_dropout: float = 0.0
    # PEFT's LoraConfig.modules_to_save: modules trained whole beside the adapters, each a trainable copy of its
    # frozen original (estimate/modules_to_save.py); their parameters are trainable too (`saved_parameters`)
    modules_to_save: tuple[str, ...] = ()
    precision: Precision = "mixed"  # mixed = fp16/bf16 compute with fp32 master weights
    optimizer: Optimizer = "adamw"
    # how AdamW's step runs on the GPU: torch's multi-tensor "foreach" (torch.optim.AdamW's CUDA default: one
    # parameter-sized temporary) or a fused kernel updating in place (torch's fused=True, the HF Trainer's default
    # adamw_torch_fused; DeepSpeed's FusedAdam from a JSON optimizer section): no temporary; "loop", a per-parameter
    # loop (the Trainer's default before transformers 4.32, or torch < 2.0: resolution/trainer_optim.py): the
    # temporaries of the largest tensor it steps, under ZeRO the flat partition (estimate/loop_step.py)
    optimizer_kernel: Literal["foreach", "fused", "loop"] = "foreach"
    gradient_checkpointing: bool = False
    attention: Attention = "sdpa"
    # The training loop of HF's 2022 Trainer on torch 1.x (estimate/memory.py's phases): transformers.AdamW
    # (a per-tensor loop, no foreach temporary), zero_grad in place (gradients allocated through forward) and
    # reentrant checkpointing (autocast copies kept). False: today's torch/accelerate defaults.
    legacy_trainer: bool = False
    # The frozen base's dtype as the run's loader leaves it, where a Trainer or TRL load says it (a script's
    # from_pretrained dtype="auto": the checkpoint's bf16; TRL's model_init_kwargs/--dtype, default float32:
    # resolution/load_dtype.py `trainer_load_dtype`). None: the built-in trainer's (trainer/finetune.py
    # `lora_base_dtype`: LoRA's base in the compute dtype under mixed precision, fp32 under FSDP or fp32 training).
    base_dtype: Literal["fp32", "bf16", "fp16"] | None = None
    # QLoRA: PEFT's prepare_model_for_kbit_training ran, casting every non-quantized parameter (embeddings, norms,
    # lm_head) to fp32 (peft 0.21 utils/other.py: every fp16/bf16 parameter that is no Params4bit). The built-in
    # trainer calls it (finetune.apply_method) after loading those parameters in fp32 anyway; TRL's SFTTrainer
    # (1.16) does not, and a Trainer script is not read for it: False leaves them in `base_dtype`.
    kbit_prepared: bool = True
    # LoRA's A and B as the script leaves them; None: PEFT's default, fp32 over a 16-bit base outside DeepSpeed
    # (states.py `peft_fp32_adapters`); "bf16": a script casts them (Answer.AI's train.py, measured on an H200)
    adapter_dtype: Literal["fp32", "bf16"] | None = None
    # The versions the run trains with (the resolution's `stack`: installed, a --system profile's, or --stack); a
    # library it does not know is today's. The loss tail follows transformers' (`copies_shifted_logits`), QLoRA's
    # saved activations bitsandbytes' (`keeps_4bit_inputs`), a prepared QLoRA's embedding TRL's
    # (`trl_bf16_cast_parameters`: TRL only where --stack says the script runs it)
    stack: Stack = Stack()
    # Batches of varying length (padded to each batch's longest, up to seq_len: the HF Trainer's and TRL's
    # collators without packing) rather than all of seq_len (accelwiz's trainer packs): the caching allocator
    # keeps loss-tail blocks of every length it saw (estimate/varying_lengths.py)
    varying_lengths: bool = False
    # The dtype the loss runs in (estimate/loss_dtype.py): "fp32", transformers' loss (ForCausalLMLoss upcasts the
    # logits); "bf16"/"fp16", a loss computed on the 16-bit logits outside autocast (a custom loop's
    # nn.CrossEntropyLoss on a pure-bf16 model; a remote-code model's own loss under DeepSpeed's 16-bit engine);
    # "logits", the model's own loss on its logits in their dtype (a model whose code does not upcast them:
    # ModelSpec.loss_upcasts_logits), made one of the others where the engine is known (loss_dtype.py)
    loss_dtype: Literal["fp32", "bf16", "fp16", "logits"] = "fp32"
    # How the loss is computed (estimate/fused_loss.py): "standard", on the full logits; "liger", Liger's fused
    # linear cross-entropy (the HF Trainer's use_liger_kernel), chunk by chunk with no logits tensor
    loss_kernel: Literal["standard", "liger", "trl-fused-head"] = "standard"
    # TRL's fused LM head ("trl-fused-head", estimate/trl_fused_head.py): the positions of each sequence it projects
    # and keeps floats for. None: every position (SFT; DPO/GRPO where Triton does not run, e.g. on a CPU). DPO and
    # GRPO under Triton: the completion length (add_fused_lm_head scores only labels != -100, the completion's)
    scored_positions_per_sequence: int | None = None
    # The caching allocator with `expandable_segments:True` (PYTORCH_CUDA_ALLOC_CONF; resolution/alloc_conf.py):
    # one segment per pool and stream grown by pages, whose reserve reserve.py takes from its own replays
    expandable_segments: bool = False
    # The GPU attention runs on, by name (memory.estimate_memory sets it): which kernel SDPA picks there, and whether
    # its math fallback keeps the s×s scores (attention_backend.py). None: unknown, SDPA counted as a fused kernel
    attention_gpu: str | None = None

    @property
    def copies_shifted_logits(self) -> bool:
        """transformers before 4.49 shifts a causal LM's fp32 logits by copying them (`shift_logits =
        logits[..., :-1, :].contiguous()`, removed by huggingface/transformers#35646); today's shifts the labels
        (activations.loss_transient_bytes)."""
        transformers = self.stack.transformers
        return transformers is not None and transformers < (4, 49) and self.model.causal_lm

    @property
    def keeps_4bit_inputs(self) -> bool:
        """QLoRA on bitsandbytes before 0.43.2: MatMul4Bit keeps its input for backward (`ctx.tensors = (A, B)`;
        bitsandbytes-foundation/bitsandbytes#1270, commit 9e75374, first released in 0.43.2, keeps `(None, B)`),
        though a frozen weight needs no input gradient (activations_lora.kept_4bit_input_terms)."""
        bitsandbytes = self.stack.bitsandbytes
        return self.regime == "qlora" and bitsandbytes is not None and bitsandbytes < BNB_DROPS_4BIT_INPUT

    @cached_property
    def trl_bf16_cast_parameters(self) -> int:
        """QLoRA prepared for k-bit training (its embedding and LM head made fp32) under TRL's SFTTrainer from 0.7.5
        until 0.26 with bf16: `peft_module_casting_to_bf16` casts every module named lm_head, embed_tokens, wte or
        wpe back to bf16 (norms stay fp32; trl/trainer/utils.py at v0.21.0, models/utils.py `prepare_peft_model`
        at v0.22-v0.25; v0.26's SFTTrainer no longer prepares). Their parameter count; 0 otherwise."""
        trl = self.stack.trl
        if not (self.regime == "qlora" and self.kbit_prepared and self.precision in ("mixed", "bf16")
                and trl is not None and TRL_CASTS_EMBEDDINGS[0] <= trl < TRL_CASTS_EMBEDDINGS[1]):
            return 0
        names = ("lm_head", "embed_tokens", "wte", "wpe")
        return self.model.scaled(sum(t.numel for t in self.model.tensors() if any(n in t.module for n in names)))

    @cached_property
    def trainable_parameters(self) -> int:
        """All parameters for full training; the LoRA A and B matrices, r·(in + out) per adapted linear, and
        the copies of the modules PEFT saves (`saved_parameters`)."""
        if self.regime == "full":
            return self.model.num_parameters
        return sum(self.adapter_matrices) + self.saved_parameters

    @cached_property
    def saved_parameters(self) -> int:
        """LoRA/QLoRA: the trainable copies of `modules_to_save` (modules_to_save.py); 0 for full training."""
        from accelwiz.estimate.modules_to_save import saved_parameters

        return 0 if self.regime == "full" else saved_parameters(self.model, self.modules_to_save)

    @cached_property
    def adapter_matrices(self) -> tuple[int, ...]:
        """The element count of each LoRA A and B matrix (none for full training)."""
        if self.regime == "full":
            return ()
        # every block (they may differ); the default targets are PEFT's "all-linear": every linear, by any name
        all_linear = self.lora_targets == ALL_LINEAR
        return self.model.lora_matrices(self.lora_rank, self.lora_targets, all_linear=all_linear,
                                        moe=self.moe_lora_targets)

    @cached_property
    def moe_lora_targets(self) -> MoeTargets | None:
        """The fused experts and router PEFT adapts on a transformers-5 MoE model at the run's peft (peft_moe.py)."""
        if self.regime == "full":
            return None
        return self.model.moe_lora_targets(self.lora_targets, all_linear=self.lora_targets == ALL_LINEAR,
                                           peft=self.stack.peft, transformers=self.stack.transformers)

    @cached_property
    def quantized_parameters(self) -> int:
        """QLoRA: the block linears bitsandbytes turns into 4-bit (embeddings, norms, lm_head stay 16-bit)."""
        if self.regime != "qlora":
            return 0
        return self.model.scaled(sum(t.numel for t in self.model.all_block_linears()))  # --params: at its count

    @property
    def compute_width(self) -> int:
        """Bytes per element the step computes in: 4 in fp32, 2 under 16-bit compute (autocast or pure bf16)."""
        return 4 if self.precision == "fp32" else 2

    @property
    def frozen_base_width(self) -> int | None:
        """Bytes per frozen (non-quantized) base parameter as loaded; None: the built-in trainer's choice, which
        depends on the strategy (frozen_base.py `frozen_weight_bytes`)."""
        if self.regime == "qlora" and self.kbit_prepared:
            return 4
        return None if self.base_dtype is None else (4 if self.base_dtype == "fp32" else 2)

    def with_micro_batch(self, micro_batch: int) -> Workload:
        return replace(self, micro_batch=micro_batch)


def check_lora_targets(spec: ModelSpec, targets: tuple[str, ...] | list[str]) -> None:
    """Every named target is a module PEFT would adapt: a block linear of this model, its output layer or its
    token embedding (or all-linear). PEFT matches target_modules by the name's last part."""
    # and on a transformers-5 MoE model the v4 names PEFT converts to its fused experts and router (peft_moe.py)
    known = {t.kind for t in spec.all_block_linears()} | OUTSIDE_BLOCK_TARGETS | spec.converted_lora_names
    unknown = [t for t in targets if t != "all-linear" and t not in known]
    if unknown:
        names = ", ".join(dict.fromkeys(t.kind for t in spec.all_block_linears()))
        raise UsageError(
            f"--lora-target {', '.join(unknown)}: no such module in {spec.name}",
            hint=f"its block linears are {names}; lm_head and the token embedding may be adapted too, "
            "or pass all-linear",
        )


def default_attention(spec: ModelSpec) -> Attention:
    """What transformers picks without attn_implementation: sdpa where the model has it, else eager."""
    return "eager" if spec.sdpa_refusal else "sdpa"


def check_attention(spec: ModelSpec, attention: str) -> None:
    """An attention implementation transformers refuses for this model is refused here, with its reason."""
    if attention == "sdpa" and spec.sdpa_refusal:
        raise UsageError(
            f"--attention sdpa: transformers has no SDPA attention for {spec.name} ({spec.sdpa_refusal})",
            hint="pass --attention eager (what from_pretrained picks for it)"
            + (", or flash (flash-attention 2 supports the soft-capping)" if spec.softcapped_logits else ""),
        )
