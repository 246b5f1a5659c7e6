"""Design (frozen until issue 28's sixteenth round; moved when LitGPT's own GPT became expressible, `--stack
litgpt==0.5.3`: estimate/litgpt_model.py): Google's Gemma cookbook notebook "Finetuning Gemma Using LitGPT"
(google-gemini/gemma-cookbook, Gemma/[Gemma_2]Finetune_with_LitGPT.ipynb, January 2025), its saved fine-tuning run
on a Colab T4.

What the number is: the `litgpt finetune_lora` cell's summary "| - Memory Used : 13.10 GB", printed by litgpt 0.5.3's
utils.py as `torch.cuda.max_memory_allocated() / 1e9` (allocated, 10^9 bytes) after training.

The run (the notebook's command and its printed hyperparameters): `pip install "litgpt[all]==0.5.3"` (torch 2.4.1,
the install log says), `litgpt finetune_lora google/gemma-2-2b --data Alpaca2k --train.max_seq_length 512
--train.micro_batch_size 2 --train.epochs 1 --precision bf16-true` on a "Tesla T4" (the run's warning "'Tesla T4'
does not support torch.bfloat16": emulated bf16). Read in litgpt v0.5.3 (finetune/lora.py, lora.py, model.py):
LoRA r=8 alpha 16 dropout 0.05 on the query and value of the fused qkv (lora_query, lora_value), everything in bf16
(bf16-true: weights, adapters, AdamW states), torch AdamW (foreach), global batch 16 (8 micro-batches accumulated),
no activation checkpointing on one device, each batch padded to its longest sample up to 512 ("The longest
sequence length in the train data is 512"), the LM head run in 128-token chunks with chunked_cross_entropy on the
chunks (Fabric's convert_output casts them to fp32 first: read after the source was scored). Gemma 2's attention
logit softcapping makes LitGPT compute attention by hand ("with softcapping we cannot use SDPA": q @ k.mT, tanh, fp32
softmax cast back to bf16): eager attention.
"""

from __future__ import annotations

_URL = ("https://github.com/google-gemini/gemma-cookbook/blob/dea850cb753c82c8d5b2f4d6729fe6f27d45b51b/"
        "Gemma/%5BGemma_2%5DFinetune_with_LitGPT.ipynb")
_SOURCE = "gemma-cookbook-litgpt-2025"

ROWS = [
    {"key": "gemma-cookbook-litgpt-gemma-2-2b-lora-t4", "source": _SOURCE, "url": _URL,
     # the cell's printed lines, their trailing spaces dropped
     "quote": ("| Performance\n| - Training Time             :  2681.59 s\n"
               "| - Tok/sec                   :  179.07 tok/s\n"
               "| -----------------------------------------------------\n"
               "| Memory Usage\n| - Memory Used               :  13.10 GB"),
     "printed": "13.10 GB", "measured_bytes": int(round(13.10e9)), "metric": "allocated",
     "argv": "estimate --model gemma-2-2b --system 1xT4 --strategy single --precision bf16 --lora --lora-rank 8 "
             "--lora-target q_proj --lora-target v_proj --lora-dropout 0.05 --micro-batch 2 "
             "--gradient-accumulation 8 --seq-len 512 --varying-lengths --loss-dtype bf16 "
             "--no-gradient-checkpointing --attention eager --stack torch==2.4.1 --stack litgpt==0.5.3 --format json",
     "assumptions": "Gemma cookbook notebook at dea850c, litgpt 0.5.3 finetune_lora: Gemma 2 2B, bf16-true, LoRA "
                    "r=8 alpha 16 dropout 0.05 on query and value, torch AdamW, micro-batch 2 (global 16), Alpaca2k "
                    "padded per batch up to 512 tokens, no checkpointing, hand-written softcapped attention, "
                    "chunked cross-entropy on Fabric's fp32 logits; max_memory_allocated / 1e9 on a Colab Tesla T4",
     "unexpressed": [
         "LitGPT's Gemma 2 block where it differs from transformers' (GemmaMLP's tanh GELU, the post-attention and "
         "post-MLP norms, the embedding scale): litgpt_model.py writes the Llama family's block terms",
         "litgpt 0.5.3's LoRA GPT returns the chunked LM head before the final logit softcapping (lora.py: "
         "`if lm_head_chunk_size > 0: return [...]`): no tanh over the logits in training",
         "bf16 emulated on the T4 (no native bf16 tensor cores): kernels and workspaces may differ",
     ]},
]
