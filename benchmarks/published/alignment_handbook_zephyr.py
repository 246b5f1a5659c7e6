"""Frozen, verdict rows: the alignment-handbook's Zephyr-7B-beta recipe (huggingface/alignment-handbook, January
2024), "Full training examples": "You will require 8 GPUs (80GB of VRAM) to train the full model", SFT then DPO under
DeepSpeed ZeRO-3. No peak is printed: each step is a recipe stated to train on 8 x 80 GB (the estimate must not say
"does not fit").

Read at the README's commit (f0ffa0d, 2024-01-10; setup.py pins transformers 4.36.2, trl 0.7.7, deepspeed 0.12.2,
accelerate 0.23.0, torch 2.1.2): recipes/accelerate_configs/deepspeed_zero3.yaml (ZeRO-3, no offload,
`mixed_precision: bf16`: DeepSpeed's bf16 engine, 16-bit module with fp32 master weights and AdamW states in the
optimizer, 8 processes); no `optim` in either config but DPO's `adamw_torch`, the Trainer's default in 4.36 being
the same torch AdamW (DeepSpeed wraps the client optimizer).

SFT (recipes/zephyr-7b-beta/sft/config_full.yaml, scripts/run_sft.py): mistralai/Mistral-7B-v0.1 loaded in bf16
with `use_flash_attention_2: true`, per-device batch 16, accumulation 1, `max_seq_length` 2048 with SFTTrainer's
`packing=True` (every sequence 2,048 tokens), gradient checkpointing (non-reentrant).

DPO (recipes/zephyr-7b-beta/dpo/config_full.yaml, scripts/run_dpo.py): alignment-handbook/zephyr-7b-sft-full (Mistral
7B's shapes) with `torch_dtype: null` (loaded in fp32, cast to bf16 by DeepSpeed's engine) and no flash attention
(ModelArguments' default false), the reference model the same checkpoint (TRL 0.7.7 prepares it through DeepSpeed
with the same ZeRO-3 config), per-device batch 8, `max_length` 1024, `max_prompt_length` 512, beta 0.01, gradient
checkpointing (non-reentrant).
"""

from __future__ import annotations

_COMMIT = "f0ffa0d7a6ab666b1f80f3f7dbb3c6364ac31967"
_URL = f"https://github.com/huggingface/alignment-handbook/blob/{_COMMIT}/recipes/zephyr-7b-beta/README.md"
_QUOTE = "You will require 8 GPUs (80GB of VRAM) to train the full model."
_PRINTED = "8 GPUs (80GB of VRAM)"
_HW = ("the page says '8 GPUs (80GB of VRAM)' without naming the card: the argv takes the 8 x A100 80GB preset "
       "(80.0 GiB each; an H100 80GB has 79.6 GiB)")
_STACK = ("TRL 0.7.7, DeepSpeed 0.12.2 and torch 2.1.2 (the CLI estimates the installed ones; transformers "
          "4.36.2 is in the argv)")

ROWS = [
    {"key": "alignment-handbook-zephyr-7b-sft-full-zero3-8x80gb-ran", "source": "alignment-handbook-zephyr",
     "url": _URL, "quote": _QUOTE, "printed": _PRINTED, "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model mistral-7b --system 8xA100-80GB --strategy zero3 --precision mixed --micro-batch 16 "
             "--seq-len 2048 --fixed-lengths --gradient-checkpointing --attention flash --optimizer adamw "
             "--stack transformers==4.36.2 --format json",
     "assumptions": (
         f"alignment-handbook at {_COMMIT[:7]}: Zephyr-7B-beta SFT, Mistral-7B-v0.1 in bf16 under DeepSpeed ZeRO-3 "
         "(bf16 engine, fp32 master weights and torch AdamW states sharded over 8 GPUs), per-device batch 16 of "
         "packed 2,048-token sequences, flash-attention 2, gradient checkpointing; stated to train on 8 x 80 GB "
         "(no peak printed)"),
     "unexpressed": [_HW, _STACK]},
    {"key": "alignment-handbook-zephyr-7b-dpo-full-zero3-8x80gb-ran", "source": "alignment-handbook-zephyr",
     "url": _URL, "quote": _QUOTE, "printed": _PRINTED, "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model mistral-7b --system 8xA100-80GB --strategy zero3 --precision mixed --kind dpo "
             "--micro-batch 8 --max-prompt-length 512 --max-completion-length 512 --beta 0.01 "
             "--gradient-checkpointing --attention eager --optimizer adamw --stack transformers==4.36.2 "
             "--format json",
     "assumptions": (
         f"alignment-handbook at {_COMMIT[:7]}: Zephyr-7B-beta DPO, zephyr-7b-sft-full (Mistral 7B) loaded in fp32 "
         "and run by DeepSpeed ZeRO-3's bf16 engine with a ZeRO-3 reference model, per-device batch 8, prompts cut "
         "at 512 and prompt + completion at 1,024 tokens, beta 0.01, gradient checkpointing, torch AdamW; "
         "attention: eager (no flash attention asked for; assumed, not read: MistralForCausalLM gained sdpa after "
         "transformers 4.36.2); stated to train on 8 x 80 GB (no peak printed)"),
     "unexpressed": [
         _HW, _STACK,
         "TRL 0.7.7's DPO collator pads each batch to its longest pair (the argv says the 512 + 512 caps)",
     ]},
]
