"""Frozen, verdict rows: Stanford Alpaca's README (tatsu-lab/stanford_alpaca, May 2023), "Fine-tuning".

The page: "Below is a command that fine-tunes LLaMA-7B with our dataset on a machine with 4 A100 80G GPUs in FSDP
`full_shard` mode. We were able to reproduce a model of similar quality as the one we hosted in our demo with the
following command", `torchrun --nproc_per_node=4 train.py ... --bf16 True --per_device_train_batch_size 4
--gradient_accumulation_steps 8 --fsdp "full_shard auto_wrap" --fsdp_transformer_layer_cls_to_wrap
'LlamaDecoderLayer' --tf32 True`, and "The same script also works for OPT fine-tuning" (OPT-6.7B, the same flags).
No peak is printed: the LLaMA-7B run is a measured "ran" (the estimate must not say "does not fit").

Read in train.py at the README's commit (761dc5b, 2023-05-29; requirements transformers>=4.28.1):
`AutoModelForCausalLM.from_pretrained(model_name_or_path, cache_dir=...)` without a torch_dtype (fp32 parameters;
the Trainer's --bf16 gives FSDP1 a bf16 MixedPrecision over the fp32 shards, autocast around the forward), a pad
token added (embeddings resized to 32,001 rows), `optim` "adamw_torch", `model_max_length` 512 (the README's "Max
length"), each sample tokenized alone without padding and truncated at 512, and DataCollatorForSupervisedDataset
padding each batch to its own longest (`pad_sequence`): --varying-lengths up to 512. No gradient checkpointing is
passed. LLaMA in transformers 4.28 has eager attention only.
"""

from __future__ import annotations

_COMMIT = "761dc5bfbdeeffa89b8bff5d038781a4055f796a"
_URL = f"https://github.com/tatsu-lab/stanford_alpaca/blob/{_COMMIT}/README.md"
_QUOTE = ("Below is a command that fine-tunes LLaMA-7B with our dataset on a machine with 4 A100 80G GPUs in FSDP "
          "`full_shard` mode. We were able to reproduce a model of similar quality as the one we hosted in our demo "
          "with the following command using **Python 3.10**.")
_SETTINGS = (
    "Stanford Alpaca train.py at 761dc5b: {model} loaded in fp32, the Trainer's --bf16 (FSDP1 bf16 MixedPrecision "
    "over fp32 shards, torch AdamW), FSDP full_shard with auto_wrap on each decoder layer on 4 x A100 80G, "
    "per-device batch 4, no gradient checkpointing, samples cut at 512 tokens and padded to each batch's longest, "
    "eager attention (transformers 4.28); {verdict}"
)

ROWS = [
    {"key": "alpaca-llama-7b-fsdp-full-4xa100-80g-ran", "source": "stanford-alpaca-readme", "url": _URL,
     "quote": _QUOTE, "printed": "4 A100 80G GPUs", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-7b --system 8xA100-80GB --gpus 4 --strategy fsdp_full --fsdp-version 1 "
             "--precision mixed --micro-batch 4 --gradient-accumulation 8 --seq-len 512 --varying-lengths "
             "--no-gradient-checkpointing "
             "--attention eager --optimizer adamw --format json",
     "assumptions": _SETTINGS.format(model="LLaMA-7B", verdict="measured to run (no peak printed)"),
     "unexpressed": [
         "LLaMA-1 7B has Llama 2 7B's shapes and parameter count (2,048 positions instead of 4,096, unused at 512 "
         "tokens); the argv names the Llama 2 preset; the added pad token (32,001 embedding rows) is not counted",
         "transformers 4.28's own FSDP wrapping in the Trainer (not accelerate's) and torch of spring 2023 (the "
         "CLI estimates the installed ones)",
         "the longest padded batch (Alpaca samples rarely reach 512 tokens; the argv says the cap)",
     ]},
    {"key": "alpaca-opt-6.7b-fsdp-full-4xa100-80g", "source": "stanford-alpaca-readme", "url": _URL,
     "quote": "The same script also works for OPT fine-tuning. Here's an example for fine-tuning OPT-6.7B",
     "printed": "OPT-6.7B", "measured_bytes": None, "metric": "reserved", "argv": None,
     "not_expressible": "the page gives the command without saying that it ran (neither a measure nor a "
                        "verdict); OPT itself is sized term by term since fe7a7f4",
     "assumptions": _SETTINGS.format(model="facebook/opt-6.7b", verdict="an example command")},
]
