"""Frozen, verdict rows: Lightning AI's lit-llama how-to guides (Lightning-AI/lit-llama howto/, April-June 2023),
each stating the hardware its fine-tuning script was run on; no peak is printed.

* howto/finetune_lora.md at 8d865ec (2023-06-08): "We demonstrate this method by instruction-finetuning LLaMA 7B
  on the Alpaca dataset on a **single RTX 3090 (24GB) GPU**" (the "~14 GB" beside `--dtype bfloat16` is
  generate/lora.py's inference, not a row). finetune/lora.py at that commit: `L.Fabric(devices=1,
  precision="bf16-true")` (weights, LoRA and AdamW states in bf16), `lora(r=8, alpha=16, dropout=0.05)` on the
  fused c_attn's query and value (enable_lora=[True, False, True]), `mark_only_lora_as_trainable`, torch AdamW,
  micro-batch 4 (accumulated to 128), Alpaca prepared by scripts/prepare_alpaca.py at `max_seq_length=256` and
  each batch padded to its own longest sample (get_batch), no activation checkpointing, the loss
  `cross_entropy(logits[..., :-1, :])` on the bf16 logits, F.scaled_dot_product_attention.
* howto/finetune_full.md at 5efbecf (2023-05-10): "[finetune/full.py] uses 4 A100 GPUs with a fully-sharded data
  parallel strategy to finetune Lit-LLaMA 7B on Alpaca dataset. The A100 GPUs have 40 GB each". finetune/full.py at
  that commit: `FSDPStrategy(auto_wrap_policy=Block, activation_checkpointing=Block)` (FSDP1, full shard, every
  Block checkpointed), `precision="bf16-mixed"` over a model built in bf16 (`LLaMA(config).bfloat16()` under
  `fabric.device`): FSDP keeps the bf16 flat parameters as built, so the weights, gradients and AdamW states are
  bf16 and only the compute policy says bf16; micro-batch 4, 8 accumulated per step (batch 128 over 4 devices),
  the same 256-token Alpaca.

The LLaMA-Adapter guides (finetune_adapter.md, finetune_adapter_v2.md, "single RTX 3090") are not rows: the CLI
has no adapter method. LLaMA 7B has Llama 2 7B's shapes (32 x 4096, MLP 11008, vocab 32000): the argv names
llama-2-7b. torch >= 2.0.0 (requirements.txt); Lightning from master on the day.
"""

from __future__ import annotations

_REPO = "https://github.com/Lightning-AI/lit-llama/blob/{commit}/howto/{page}"
_SOURCE = "lit-llama-howto-2023"
_CODE = "lit-llama's own LLaMA module and LoRA (the argv estimates transformers' Llama with PEFT)"

ROWS = [
    {"key": "lit-llama-7b-lora-1xrtx3090-ran", "source": _SOURCE,
     "url": _REPO.format(commit="8d865ec94c48e41f7e5c896abf4bae68d5d5cff5", page="finetune_lora.md"),
     "quote": ("We demonstrate this method by instruction-finetuning LLaMA 7B on the "
               "[Alpaca](https://github.com/tatsu-lab/stanford_alpaca) dataset on a **single RTX 3090 (24GB) "
               "GPU**.\n...\nThe finetuning requires at least one GPU with ~24 GB memory (RTX 3090)."),
     "printed": "single RTX 3090 (24GB) GPU", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-7b --system 1xRTX3090 --strategy single --precision bf16 --lora "
             "--lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 --micro-batch 4 "
             "--gradient-accumulation 32 --seq-len 256 --varying-lengths --loss-dtype bf16 "
             "--no-gradient-checkpointing --attention sdpa --stack torch==2.0.0 --format json",
     "assumptions": "lit-llama finetune/lora.py at 8d865ec: LLaMA 7B, bf16-true, LoRA r=8 alpha 16 dropout 0.05 on "
                    "query and value, torch AdamW, micro-batch 4 of Alpaca samples cut at 256 tokens (each batch "
                    "padded to its longest), no checkpointing, the loss on bf16 logits; stated to have run on one "
                    "RTX 3090 24GB (no peak printed)",
     "unexpressed": [_CODE, "lit-llama's LoRA keeps its adapters in bf16 under bf16-true; the argv's bf16 LoRA "
                            "counts PEFT's default fp32 adapters",
                     "the validation every 100 iterations (100 batches under no_grad and a generated sample)"]},
    {"key": "lit-llama-7b-full-fsdp-4xa100-40gb-ran", "source": _SOURCE,
     "url": _REPO.format(commit="5efbecf1f7a24e396d4c3a2fa3233dbb5e7859d1", page="finetune_full.md"),
     "quote": ("The current  [finetune/full.py](../finetune/full.py) we provide uses 4 A100 GPUs with a "
               "fully-sharded data parallel strategy to finetune Lit-LLaMA 7B on "
               "[Alpaca](https://github.com/tatsu-lab/stanford_alpaca) dataset. The A100 GPUs have 40 GB each, but "
               "it may require less memory to finetune this model."),
     "printed": "uses 4 A100 GPUs", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-7b --system 4xA100-40GB --strategy fsdp_full --fsdp-version 1 "
             "--no-fsdp-upcast --precision bf16 --micro-batch 4 --gradient-accumulation 8 --seq-len 256 "
             "--varying-lengths --gradient-checkpointing --attention sdpa --stack torch==2.0.0 --format json",
     "assumptions": "lit-llama finetune/full.py at 5efbecf: LLaMA 7B built in bf16 and wrapped by Fabric's FSDP1 "
                    "(full shard, each Block wrapped and checkpointed) under bf16-mixed: bf16 flat parameters, "
                    "gradients and torch AdamW states; micro-batch 4 (8 accumulated) of Alpaca samples cut at 256 "
                    "tokens; stated to run on 4 A100 40GB (no peak printed)",
     "unexpressed": [_CODE, "the whole bf16 model is built on every GPU before FSDP shards it (13.5 GB per GPU "
                            "at setup, freed when wrapped)"]},
]
