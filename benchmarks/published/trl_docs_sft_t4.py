"""Frozen, a verdict row: TRL's documentation "Fine-tune Llama2 with SFTTrainer" note (July 2023), Llama-2-7b QLoRA
"tested on a single NVIDIA T4-16GB".

The page: docs/source/lora_tuning_peft.mdx as PR #543 wrote it (commit 5857d0a, 2023-07-19): "You can easily
fine-tune Llama2 model using `SFTTrainer` and the official script! For example to fine-tune llama2-7b on the Guanaco
dataset, run (tested on a single NVIDIA T4-16GB)", with `python examples/scripts/sft_trainer.py --model_name
meta-llama/Llama-2-7b-hf --dataset_name timdettmers/openassistant-guanaco --load_in_4bit --use_peft --batch_size 4
--gradient_accumulation_steps 2`. No peak is printed: the run is a measured "ran" on a 16 GB T4.

Read at that commit (examples/scripts/sft_trainer.py, trl/trainer/sft_trainer.py, TRL 0.4.8.dev0; PEFT 0.4.0 of the
day before): `BitsAndBytesConfig(load_in_4bit=True)` with transformers' defaults of July 2023 (quant type fp4, no
double quantization, compute dtype float32), the rest loaded in bf16; SFTTrainer calls PEFT's
prepare_model_for_int8_training (= prepare_model_for_kbit_training: every non-quantized parameter cast to fp32,
gradient checkpointing enabled); LoraConfig(r=64, lora_alpha=16) with PEFT's default targets for Llama (q_proj,
v_proj) and dropout 0.0; TrainingArguments without fp16/bf16 (fp32, no autocast; the Trainer's default optim
adamw_hf), per-device batch 4; no packing, the script's --seq_length not passed to SFTTrainer, so max_seq_length =
min(tokenizer.model_max_length, 1024) = 1024, samples tokenized without padding and each batch padded to its own
longest by DataCollatorForLanguageModeling (--varying-lengths); transformers 4.31's Llama has eager attention only.
"""

from __future__ import annotations

_COMMIT = "5857d0acc6f715d6388809df3c53a5b611ebff40"
_URL = f"https://github.com/huggingface/trl/blob/{_COMMIT}/docs/source/lora_tuning_peft.mdx"

ROWS = [
    {"key": "trl-docs-llama-2-7b-qlora-t4-ran", "source": "trl-docs-sft-llama2-t4", "url": _URL,
     "quote": "You can easily fine-tune Llama2 model using `SFTTrainer` and the official script! For example to "
              "fine-tune llama2-7b on the Guanaco dataset, run (tested on a single NVIDIA T4-16GB):",
     "printed": "tested on a single NVIDIA T4-16GB", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-7b --system 1xT4 --strategy single --precision fp32 --qlora --lora-rank 64 "
             "--lora-target q_proj --lora-target v_proj --micro-batch 4 --gradient-accumulation 2 --seq-len 1024 "
             "--varying-lengths "
             "--gradient-checkpointing --attention eager --stack bitsandbytes==0.40.2 --stack transformers==4.31 "
             "--format json",
     "assumptions": (
         f"TRL at {_COMMIT[:7]}: examples/scripts/sft_trainer.py on Llama-2-7b-hf in 4 bits (bitsandbytes fp4, fp32 "
         "compute), prepare_model_for_int8_training (fp32 non-quantized parameters, gradient checkpointing), LoRA "
         "r=64 alpha 16 on q_proj and v_proj without dropout, fp32 training, batch 4, Guanaco cut at 1,024 tokens "
         "and padded to each batch's longest, eager attention, one T4 16 GB; measured to run (no peak printed); "
         "the stack of 2023-07-19 in the argv: transformers 4.31 (released the day before) and bitsandbytes 0.40.2 "
         "(0.41.0 came on 07-22; both keep every 4-bit linear's fp32 input here, fp32 compute casting nothing)"),
     "unexpressed": [
         "FP4 without double quantization (transformers' BitsAndBytesConfig default then; the CLI's QLoRA is NF4 "
         "double-quantized: the same 4 bits per weight, about 0.4 bits/param less for the constants)",
         "the Trainer's adamw_hf (transformers' own AdamW, a per-parameter loop: no foreach temporary) for the "
         "argv's torch AdamW",
         "the padded length of the longest batch (Guanaco samples above 1,024 tokens are cut there; the argv says "
         "the cap)",
     ]},
]
