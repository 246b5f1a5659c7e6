"""Design (frozen until issue 28's sixteenth round; moved when LitGPT's own GPT became expressible, `--stack
litgpt==0.1.0`, lit-gpt's setup.py version at 29de282: estimate/litgpt_model.py): LitGPT's dataset tutorial as
first written with its truncation advice (tutorials/prepare_dataset.md, PR #588 by Sebastian Raschka,
2023-09-27): "the Falcon 7B model requires 23.52 GB of memory for the original
Alpaca dataset and 15.73 GB of memory for the truncated Alpaca dataset when finetuning with LoRA using a micro
batchsize of 1 and bfloat-16 precision" (the truncation: `scripts/prepare_alpaca.py --max_seq_length 256`).

What the number is: finetune/lora.py's `Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB` at the
end of training (allocated, 10^9 bytes, one GPU).

The settings, read in lit-gpt at 29de282 (the same commit): finetune/lora.py with `micro_batch_size` set to 1 (the
script's default is 4: the page says 1), one device (no FSDP, no activation checkpointing), LoRA r=8 alpha 16
dropout 0.05 on the query and value parts of the fused qkv linear only (lora_query, lora_value), torch AdamW over the
adapters, `model(input_ids, lm_head_chunk_size=128)` and chunked_cross_entropy on the logit chunks (Fabric's
convert_output casts them to fp32 first: read after the source was scored).
"bfloat-16 precision" is read as `--precision bf16-true` (weights, adapters and AdamW states in bf16): the script's
default on an A100, bf16-mixed, keeps Falcon 7B's weights in fp32 (27.6 GB, above both printed figures). The first
iteration forces the longest training sample into the batch (`get_batch(..., longest_seq_ix if iter_num == 0)`), so
the truncated run's peak step holds a 256-token sequence. The page names no GPU (an A100-40GB is assumed; the
allocated figure does not depend on it).
"""

from __future__ import annotations

_URL = ("https://github.com/Lightning-AI/litgpt/blob/29de28285f6334c984a07066731960236b7cb476/"
        "tutorials/prepare_dataset.md")
_SOURCE = "litgpt-prepare-dataset-falcon-2023"
_QUOTE = ("For comparison, the Falcon 7B model requires 23.52 GB of memory for the original Alpaca dataset and 15.73 "
          "GB of memory for the truncated Alpaca dataset when finetuning with LoRA using a micro batchsize of 1 and "
          "bfloat-16 precision.")
_SETTINGS = (
    "lit-gpt finetune/lora.py at 29de282: Falcon 7B (multi-query attention, vocab 65,024), micro-batch 1, "
    "bf16-true, LoRA r=8 alpha 16 dropout 0.05 on query and value of the fused qkv, torch AdamW, no activation "
    "checkpointing, chunked cross-entropy on Fabric's fp32 logits, Alpaca {data}; 'GB' is "
    "torch.cuda.max_memory_allocated() / 1e9 on one GPU (not named: A100-40GB assumed)"
)
_UNEXPRESSED = [
    "LitGPT's own Falcon block and LoRA on the fused qkv's query and value parts (the argv adapts transformers' "
    "Falcon query_key_value as a whole: litgpt_model.py writes the Llama family's block terms only)",
    "the validation before training (100 batches under no_grad, then a 100-token generation with a KV cache)",
]

ROWS = [
    {"key": "litgpt-prep-falcon-7b-lora-alpaca-256", "source": _SOURCE, "url": _URL, "quote": _QUOTE,
     "printed": "15.73 GB", "measured_bytes": int(round(15.73e9)), "metric": "allocated",
     "argv": "estimate --model benchmarks/published/models/falcon-7b-instruct/config.json --system 1xA100-40GB "
             "--strategy single --precision bf16 --lora --lora-rank 8 --lora-target query_key_value "
             "--lora-dropout 0.05 --micro-batch 1 --seq-len 256 --loss-dtype bf16 --no-gradient-checkpointing "
             "--attention sdpa --stack torch==2.1.0 --stack litgpt==0.1.0 --format json",
     "assumptions": _SETTINGS.format(data="prepared with --max_seq_length 256 (the first, longest batch 256 tokens)"),
     "unexpressed": [*_UNEXPRESSED, "torch 2.1.0 (lit-gpt's requirement on the page's date) assumed"]},
    {"key": "litgpt-prep-falcon-7b-lora-alpaca-full", "source": _SOURCE, "url": _URL, "quote": _QUOTE,
     "printed": "23.52 GB", "measured_bytes": int(round(23.52e9)), "metric": "allocated", "argv": None,
     "not_expressible": "the sequence length: Alpaca's longest sample under Falcon's tokenizer (the first batch's "
                        "length) is not printed, and neither the tokenizer nor the data was at hand to count it",
     "assumptions": _SETTINGS.format(data="at its full length (block size = the longest tokenized sample)")},
]
