"""Frozen: torchtune's "Llama3 in torchtune" tutorial (2024-04-18), Llama3-8B LoRA on one GPU; not the README's
table and not the LoRA/QLoRA tutorials (torchtune_tutorials.py).

The page: docs/source/tutorials/llama3.rst as first written (PR #793 "Llama3 changes", commit 20747cd), one
measured figure: "In our experiments, we observed a peak memory usage of 18.5 GB", for `tune run
lora_finetune_single_device --config llama3/8B_lora_single_device`. Read at that commit: the config builds
lora_llama3_8b (LoRA rank 8 alpha 16 on q_proj and v_proj, no dropout: lora_llama3's lora_dropout 0.0, which the
8B builder does not set; no MLP, no output layer) with `dtype: bf16` (the whole model and its adapters in bf16, no
autocast: `utils.set_default_dtype(self._dtype)` in `_setup_model`), `enable_activation_checkpointing: True`,
torch.optim.AdamW, batch 2, alpaca_cleaned_dataset (train_on_input, max_seq_len 512: samples cut at 512 tokens)
through utils.padded_collate (each batch padded to its own longest), and torch.nn.CrossEntropyLoss on the logits
TransformerDecoder returns in fp32 (`self.output(h).float()`: the loss in fp32, as the CLI's default).

What the number is: the recipe logs utils.memory_stats_log (peak active, allocated and reserved in 10^9 bytes,
the peak reset at each log, every 100 steps); the page does not say which. Read as allocated: the README of the
next day (commit c69fba1, PR #802) says of the same default config "LoRA on a single GPU has a peak allocated
memory of ``~19GB``". The GPU is not named ("can be trained on a consumer GPU with 24 GB VRAM"); assumed an
A100-80GB, which does not change an allocated figure.
"""

from __future__ import annotations

_COMMIT = "20747cd87ba803d514d5d3d57e90fcfb059ecf56"
_URL = f"https://github.com/pytorch/torchtune/blob/{_COMMIT}/docs/source/tutorials/llama3.rst"

ROWS = [
    {"key": "torchtune-llama3-8b-lora-r8-qv", "source": "torchtune-llama3-tutorial", "url": _URL,
     "quote": "In our experiments, we observed a peak memory usage of 18.5 GB. The default config can be trained on "
              "a consumer GPU with 24 GB VRAM.",
     "printed": "18.5 GB", "measured_bytes": int(18.5e9), "metric": "allocated",
     "argv": "estimate --model llama-3.1-8b --system 1xA100-80GB --strategy single --precision bf16 --lora "
             "--lora-rank 8 --lora-dropout 0.0 --lora-target q_proj --lora-target v_proj --micro-batch 2 "
             "--seq-len 512 --varying-lengths --gradient-checkpointing --attention sdpa --format json",
     "assumptions": (
         f"torchtune at {_COMMIT[:7]}, llama3/8B_lora_single_device.yaml: Llama3-8B in bf16 (dtype bf16, adapters "
         "too), activation checkpointing, torch AdamW, batch 2, Alpaca-cleaned cut at 512 tokens and padded to each "
         "batch's longest, LoRA rank 8 alpha 16 dropout 0.0 on q_proj and v_proj, fp32 loss; 'peak memory usage' "
         "read as the logged peak allocated memory (the next day's README: 'a peak allocated memory of ``~19GB``') in "
         "10^9 bytes over a 100-step logging window; A100-80GB assumed"),
     "unexpressed": [
         "torchtune's own Llama3 module and LoRALinear (adapters in bf16 under dtype bf16; the argv's bf16 LoRA "
         "counts PEFT's default fp32 adapters, each adapted linear keeping an fp32 copy of its input)",
         "the padded length of the window's longest batch (not printed; the argv says the 512-token cap)",
         "Meta-Llama-3-8B (the argv names the Llama 3.1 8B preset: the same shapes and 128,256-token vocabulary; "
         "3.1's RoPE scaling and longer context do not change memory at 512 tokens)",
     ]},
]
